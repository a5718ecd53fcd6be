"""The Python client's reference in protocol/README.md: every public name has an example, and
the examples run, in order, against a real `agentls serve` on the scripted model."""

from __future__ import annotations

import re
import textwrap

import protocol.client
from protocol.client import Client
from protocol.docs_prose import PYTHON_CLIENT_REFERENCE
from tests.agent_client import server_env

BLOCKS = re.findall(r"```python\n(.*?)```", PYTHON_CLIENT_REFERENCE, re.S)


def test_every_public_name_is_in_an_example():
    code = "\n".join(BLOCKS)
    missing = [n for n in protocol.client.__all__ if not re.search(rf"\b{n}\b", code)]
    assert not missing, missing


async def test_the_examples_run(tmp_path, workspace, monkeypatch):
    (workspace / "README.md").write_text("# demo\n")
    monkeypatch.chdir(workspace)
    env = server_env(tmp_path, AGENTLS_PROVIDER="scripted")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    namespace: dict = {}
    for block in BLOCKS:
        source = "async def _example():\n" + textwrap.indent(block, "    ")
        exec(compile(source + "    return locals()\n", "<example>", "exec"), namespace)
        namespace.update(await namespace.pop("_example")())
        if isinstance(namespace.get("client"), Client) and namespace["client"].connection.closed:
            # the first example closes its client; the rest reuse one the same way
            namespace["client"] = await Client.spawn(env=env)
    await namespace["client"].close()
