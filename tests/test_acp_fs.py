"""File tools through the ACP client's `fs/read_text_file` / `fs/write_text_file`."""

from __future__ import annotations

from typing import Any

from acp import schema

from server.testing.fake_llm import FakeToolCall, Reply
from tests.test_acp_frontend import Editor, agentls_acp, fake_env, text, tool_results

FS = schema.ClientCapabilities(
    fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
)


class BufferEditor(Editor):
    """An editor with unsaved buffers, served over `fs/*`; writes stay in its buffers."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = dict(buffers)
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any):
        self.reads.append(path)
        if path not in self.buffers:
            raise ValueError(f"no buffer for {path}")
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        self.writes.append((path, content))
        self.buffers[path] = content
        return schema.WriteTextFileResponse()


def script(fake_llm) -> None:
    fake_llm.script(
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[FakeToolCall("write_file", {"path": "out.txt", "content": "new\n"})]),
        Reply(tool_calls=[FakeToolCall("read_file", {"path": "other.txt"})]),
        Reply(text="done"),
    )


async def test_file_tools_go_through_the_editor_buffers(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("on disk\n")
    (workspace / "other.txt").write_text("only on disk\n")
    notes = str(workspace / "notes.txt")
    script(fake_llm)
    editor = BufferEditor({notes: "unsaved buffer\n"})
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor, caps=FS) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=text("go"))

    assert response.stop_reason == "end_turn"
    read = tool_results(fake_llm, 1)[0]
    assert "1: unsaved buffer" in read and "on disk" not in read
    done = [u for u in editor.updates if u.session_update == "tool_call_update" and u.status]
    assert "unsaved buffer" in done[1].content[0].content.text
    out = str(workspace / "out.txt")
    assert editor.writes == [(out, "new\n")]
    assert not (workspace / "out.txt").exists()
    assert (workspace / "notes.txt").read_text() == "on disk\n"
    # A file the editor does not serve falls back to the disk.
    assert "1: only on disk" in tool_results(fake_llm, 3)[-1]
    assert str(workspace / "other.txt") in editor.reads


async def test_without_the_capability_the_disk_is_used(tmp_path, workspace, fake_llm):
    (workspace / "notes.txt").write_text("on disk\n")
    (workspace / "other.txt").write_text("only on disk\n")
    script(fake_llm)
    editor = BufferEditor({str(workspace / "notes.txt"): "unsaved buffer\n"})
    async with agentls_acp(tmp_path, fake_env(tmp_path, fake_llm), editor) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text("go"))

    assert "1: on disk" in tool_results(fake_llm, 1)[0]
    assert (workspace / "out.txt").read_text() == "new\n"
    assert (editor.reads, editor.writes) == ([], [])
