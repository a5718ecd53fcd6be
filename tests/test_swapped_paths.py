"""A path swapped for a symlink after the permission check (a background job racing the agent)
must not redirect the open: the file tools open what the policy judged, or fail (issue 19,
item 5). The swap happens between `decide` and `run`, exactly where a racing job would land.
A file swapped for a hard link to an outside file is caught on the opened descriptor (its link
count) before anything is truncated, and missing folders are created one component at a time
without following a symlink."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from server.permissions import Decision, PermissionState, decide
from server.tools.base import ToolContext, ToolError
from server.tools.files import EditFile, ReadFile, WriteFile

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")


@pytest.fixture
def layout(tmp_path: Path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "notes").mkdir(parents=True)
    outside.mkdir()
    (ws / "notes" / "todo.txt").write_text("inside\n")
    (outside / "todo.txt").write_text("outside\n")
    return ws, outside


def swap(ws: Path, outside: Path) -> None:
    shutil.rmtree(ws / "notes")
    (ws / "notes").symlink_to(outside)


async def judged_then(tool, args, ws: Path, change):
    ctx = ToolContext(cwd=ws)
    assert decide(tool, args, ctx, PermissionState(mode="acceptEdits")) == Decision("allow")
    change()
    return await tool.run(ctx, args)


async def judged_then_swapped(tool, args, ws: Path, outside: Path):
    return await judged_then(tool, args, ws, lambda: swap(ws, outside))


async def test_a_write_does_not_follow_a_symlink_swapped_in_after_the_check(layout):
    ws, outside = layout
    tool = WriteFile()
    with pytest.raises(ToolError, match="outside the workspace"):
        await judged_then_swapped(
            tool, tool.Input(path="notes/todo.txt", content="x\n"), ws, outside
        )
    assert (outside / "todo.txt").read_text() == "outside\n"


async def test_an_edit_does_not_follow_a_symlink_swapped_in_after_the_check(layout):
    ws, outside = layout
    tool = EditFile()
    args = tool.Input(path="notes/todo.txt", old_string="outside", new_string="changed")
    with pytest.raises(ToolError, match="outside the workspace"):
        await judged_then_swapped(tool, args, ws, outside)
    assert (outside / "todo.txt").read_text() == "outside\n"


async def test_a_read_does_not_follow_a_symlink_swapped_in_after_the_check(layout):
    ws, outside = layout
    tool = ReadFile()
    with pytest.raises(ToolError, match="outside the workspace"):
        await judged_then_swapped(tool, tool.Input(path="notes/todo.txt"), ws, outside)


# Hard links and folders created on the way.


def hard_link_swap(ws: Path, outside: Path):
    def swap() -> None:
        (ws / "notes" / "todo.txt").unlink()
        os.link(outside / "todo.txt", ws / "notes" / "todo.txt")

    return swap


async def test_a_write_to_a_file_swapped_for_a_hard_link_is_refused(layout):
    ws, outside = layout
    tool = WriteFile()
    args = tool.Input(path="notes/todo.txt", content="x\n")
    with pytest.raises(ToolError, match="hard link"):
        await judged_then(tool, args, ws, hard_link_swap(ws, outside))
    assert (outside / "todo.txt").read_text() == "outside\n"


async def test_an_edit_of_a_file_swapped_for_a_hard_link_is_refused(layout):
    ws, outside = layout
    tool = EditFile()
    args = tool.Input(path="notes/todo.txt", old_string="outside", new_string="changed")
    with pytest.raises(ToolError, match="hard link"):
        await judged_then(tool, args, ws, hard_link_swap(ws, outside))
    assert (outside / "todo.txt").read_text() == "outside\n"


async def test_missing_folders_are_not_created_through_a_symlink_swapped_in(layout):
    ws, outside = layout

    def swap() -> None:
        shutil.rmtree(ws / "notes")
        (ws / "notes").symlink_to(outside)

    tool = WriteFile()
    args = tool.Input(path="notes/new/deep/file.txt", content="x\n")
    with pytest.raises(ToolError):
        await judged_then(tool, args, ws, swap)
    assert sorted(p.name for p in outside.iterdir()) == ["todo.txt"]


async def test_missing_folders_are_still_created(layout):
    ws, _outside = layout
    tool = WriteFile()
    args = tool.Input(path="notes/new/deep/file.txt", content="x\n")
    await judged_then(tool, args, ws, lambda: None)
    assert (ws / "notes" / "new" / "deep" / "file.txt").read_text() == "x\n"
