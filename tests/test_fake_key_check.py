"""The fake model checks the key as each service does: a right key gets through however the
official SDK sends it, a wrong one gets the service's 401."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from server.testing.fake_llm import FakeModelServer, Reply


def run_print(fake: FakeModelServer, tmp_path, key: str, provider: str, url: str):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env |= {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "AGENTLS_HOME": str(tmp_path / "data"),
        "AGENTLS_PROVIDER": provider,
        "AGENTLS_MODEL": "claude-sonnet-4-6" if provider == "anthropic" else "gpt-4.1",
        "AGENTLS_BASE_URL": url,
        f"{provider.upper()}_API_KEY": key,
    }
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "-p", "hello"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_right_key_gets_an_answer_through_agentls(tmp_path, provider):
    with FakeModelServer(api_key="the-key") as fake:
        fake.script(Reply(text="hi there"))
        url = fake.base_url if provider == "anthropic" else fake.openai_base_url
        done = run_print(fake, tmp_path, "the-key", provider, url)
    assert done.returncode == 0, done.stderr
    assert "hi there" in done.stdout


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_wrong_key_gets_the_services_401(tmp_path, provider):
    with FakeModelServer(api_key="the-key") as fake:
        url = fake.base_url if provider == "anthropic" else fake.openai_base_url
        done = run_print(fake, tmp_path, "another-key", provider, url)
    assert done.returncode != 0
    assert "401" in done.stderr
