"""An ACP editor's `fs/write_text_file` while a sandboxed background command swaps a folder of
the workspace for a symlink to an outside one, over and over: the editor opens the path it is
given and follows links, so nothing may be handed to it while such a command can run. Every
write must land inside the workspace (or fail), never outside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import schema

from server.testing.fake_llm import FakeToolCall, Reply
from server.tools.sandbox import probe
from tests.test_acp_frontend import Editor, agentls_acp, fake_env, text

pytestmark = [
    pytest.mark.skipif(not probe().available, reason=f"no sandbox: {probe().reason}"),
    pytest.mark.timeout(600),
]
FS = schema.ClientCapabilities(
    fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
)
BATCHES, PER_BATCH = 60, 10


class DiskEditor(Editor):
    """An editor that saves what it is sent where the path leads, links followed."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any):
        return schema.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        self.writes += 1
        Path(path).write_text(content)
        return schema.WriteTextFileResponse()


async def test_editor_writes_never_land_outside_while_a_sandboxed_job_swaps_a_folder(
    tmp_path, workspace, fake_llm
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "d").mkdir()
    swap = (
        "import os, pathlib, shutil\n"
        "while not pathlib.Path('stop').exists():\n"
        "    try:\n"
        "        os.rename('d', 'd.real')\n"
        f"        os.symlink({str(outside)!r}, 'd')\n"
        "        os.unlink('d')\n"
        "        os.rename('d.real', 'd')\n"
        "    except OSError:\n"
        "        if os.path.islink('d'):\n"
        "            os.unlink('d')\n"
        "        if os.path.isdir('d.real'):\n"
        "            if os.path.exists('d'):\n"
        "                shutil.rmtree('d.real')\n"
        "            else:\n"
        "                os.rename('d.real', 'd')\n"
    )
    (workspace / "swap.py").write_text(swap)
    job = FakeToolCall("bash", {"command": "python3 swap.py", "run_in_background": True}, id="job")
    writes = [
        Reply(
            tool_calls=[
                FakeToolCall("write_file", {"path": f"d/f{b}_{i}.txt", "content": "x"}, id=f"w{b}_{i}")
                for i in range(PER_BATCH)
            ]
        )
        for b in range(BATCHES)
    ]
    stop = FakeToolCall("bash", {"command": "touch stop"}, id="stop")
    out = FakeToolCall("bash_output", {"jobId": "bash_1"}, id="out")
    fake_llm.script(
        Reply(tool_calls=[job]), *writes, Reply(tool_calls=[stop]), Reply(tool_calls=[out]),
        Reply(text="done"),
    )
    editor = DiskEditor()
    editor.on_permission = lambda r: schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id="reject_once")
    )
    env = fake_env(tmp_path, fake_llm, AGENTLS_SANDBOX="workspace-write")
    async with agentls_acp(tmp_path, env, editor, caps=FS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="acceptEdits")
        await conn.prompt(session_id=session.session_id, prompt=text("go"))
    assert editor.writes + len(editor.permissions) > 0
    assert sorted(p.name for p in outside.iterdir()) == [], "a write landed outside"
