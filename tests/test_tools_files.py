import os
import re
from pathlib import Path

import pytest

from server.tools.base import Diff, ToolContext, ToolError, ToolResult
from server.tools.files import EditFile, ListDir, ReadFile, WriteFile
from server.tools.registry import builtin_tools, tools_by_name
from server.tools.shell import BackgroundJobs, Bash, BashOutput, KillBash

posix_only = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, path: str, **kw) -> dict:
    tool = ReadFile()
    return await tool.run(ctx, tool.Input(path=path, **kw))


async def write(ctx: ToolContext, path: str, content: str) -> ToolResult:
    tool = WriteFile()
    return await tool.run(ctx, tool.Input(path=path, content=content))


async def edit(ctx: ToolContext, path: str, old: str, new: str, **kw):
    tool = EditFile()
    return await tool.run(ctx, tool.Input(path=path, old_string=old, new_string=new, **kw))


def age(path: Path, seconds: float = 10) -> None:
    """Move the mtime so a change is visible whatever the filesystem's timestamp granularity."""
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime - seconds))


# read_file


async def test_read_numbers_lines_and_reports_the_range(ctx, tmp_path):
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    assert await read(ctx, "a.py") == {
        "content": "1: one\n2: two\n3: three",
        "totalLines": 3,
        "startLine": 1,
        "endLine": 3,
    }


async def test_read_slices_with_offset_and_limit(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert await read(ctx, "a.txt", offset=4, limit=3) == {
        "content": "4: line 4\n5: line 5\n6: line 6",
        "totalLines": 10,
        "startLine": 4,
        "endLine": 6,
    }


async def test_read_counts_a_last_line_without_newline(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\nb")
    result = await read(ctx, "a.txt", offset=2)
    assert result == {"content": "2: b", "totalLines": 2, "startLine": 2, "endLine": 2}


async def test_read_offset_past_the_end_names_total_lines(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match=r"offset 3 is past the end of a.txt \(totalLines 2\)"):
        await read(ctx, "a.txt", offset=3)


async def test_read_empty_file(ctx, tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    expected = {
        "content": "",
        "totalLines": 0,
        "startLine": 1,
        "endLine": 0,
        "note": "The file is empty.",
    }
    assert await read(ctx, "empty.txt") == expected
    with pytest.raises(ToolError, match="totalLines 0"):
        await read(ctx, "empty.txt", offset=2)


async def test_read_crlf_file_shows_no_carriage_returns(ctx, tmp_path):
    (tmp_path / "win.txt").write_bytes(b"alpha\r\nbeta\r\n")
    assert (await read(ctx, "win.txt"))["content"] == "1: alpha\n2: beta"


async def test_read_strips_bom_from_first_line_only(ctx, tmp_path):
    (tmp_path / "bom.txt").write_bytes("\ufeffhead\n\ufeffsecond\n".encode())
    assert (await read(ctx, "bom.txt"))["content"] == "1: head\n2: \ufeffsecond"


async def test_read_replaces_invalid_utf8(ctx, tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    assert (await read(ctx, "latin.txt"))["content"] == "1: caf\ufffd"


async def test_read_cuts_very_long_lines(ctx, tmp_path):
    (tmp_path / "min.js").write_text("x" * 5000 + "\n")
    content = (await read(ctx, "min.js"))["content"]
    assert content == "1: " + "x" * 2000 + "… [line truncated, 5000 characters]"


async def test_read_refuses_binary_files(ctx, tmp_path):
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match=r"img.png is a binary file \(16 bytes\)"):
        await read(ctx, "img.png")


async def test_read_directory_points_to_list_dir_and_glob(ctx, tmp_path):
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"is a directory; use list_dir .* or glob"):
        await read(ctx, "src")


async def test_read_missing_file_names_the_absolute_path(ctx, tmp_path):
    with pytest.raises(ToolError) as err:
        await read(ctx, "nope/missing.py")
    assert str(err.value) == f"File not found: {tmp_path / 'nope' / 'missing.py'}"


async def test_read_unicode_path(ctx, tmp_path):
    folder = tmp_path / "données"
    folder.mkdir()
    (folder / "файл 名.txt").write_text("héllo\n", encoding="utf-8")
    assert (await read(ctx, "données/файл 名.txt"))["content"] == "1: héllo"


async def test_read_records_mtime_under_the_real_path(ctx, tmp_path):
    (tmp_path / "src").mkdir()
    target = tmp_path / "src" / "a.py"
    target.write_text("x\n")
    await read(ctx, "src/../src/./a.py")
    assert ctx.read_times == {target.resolve(): target.stat().st_mtime}


async def test_read_slice_at_the_end_of_a_50_mb_file(ctx, tmp_path):
    line = b"%07d " + b"x" * 41 + b"\n"
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(line % i for i in range(1, 1_000_001)))
    assert big.stat().st_size == 50_000_000
    result = await read(ctx, "big.log", offset=999_999, limit=5)
    assert result == {
        "content": "999999: 0999999 " + "x" * 41 + "\n1000000: 1000000 " + "x" * 41,
        "totalLines": 1_000_000,
        "startLine": 999_999,
        "endLine": 1_000_000,
    }


@posix_only
async def test_read_symlink_loop_is_a_clear_error(ctx, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(ToolError, match=r"Cannot access .*loop: Too many levels of symbolic links"):
        await read(ctx, "loop")


@posix_only
async def test_read_refuses_fifos_instead_of_blocking(ctx, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        await read(ctx, "pipe")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        await edit(ctx, "pipe", "a", "b")


def test_read_metadata():
    tool = ReadFile()
    args = tool.Input(path="src/app.py", offset=10)
    assert (tool.name, tool.kind, tool.read_only) == ("read_file", "read", True)
    assert tool.title(args) == "Read src/app.py (from line 10)"
    assert tool.title(tool.Input(path="src/app.py")) == "Read src/app.py"
    assert tool.paths(args) == ["src/app.py"]
    assert tool.always_ask(args) is None


def test_read_input_rejects_unknown_fields_and_bad_offsets():
    with pytest.raises(ValueError):
        ReadFile.Input(path="a", encoding="latin-1")
    with pytest.raises(ValueError):
        ReadFile.Input(path="a", offset=0)


# write_file


async def test_write_creates_parents_and_returns_bytes(ctx, tmp_path):
    result = await write(ctx, "new/dir/é.txt", "héllo\r\nno newline")
    target = tmp_path / "new" / "dir" / "é.txt"
    assert result == ToolResult(
        content={"path": str(target), "bytes": 18},
        diff=Diff(path=str(target), old_text=None, new_text="héllo\r\nno newline"),
    )
    assert target.read_bytes() == "héllo\r\nno newline".encode()
    assert ctx.read_times == {target.resolve(): target.stat().st_mtime}


async def test_write_overwrite_diffs_against_old_text(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("old\n")
    result = await write(ctx, "a.txt", "")
    assert result.diff == Diff(path=str(tmp_path / "a.txt"), old_text="old\n", new_text="")
    assert result.content == {"path": str(tmp_path / "a.txt"), "bytes": 0}
    assert (tmp_path / "a.txt").read_bytes() == b""


async def test_write_to_a_directory_is_an_error(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await write(ctx, "d", "x")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(ToolError, match="is not a regular file"):
            await write(ctx, "pipe", "x")


async def test_write_under_a_file_is_an_error(ctx, tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(ToolError, match="Cannot write"):
        await write(ctx, "f/child.txt", "x")


def test_write_metadata():
    tool = WriteFile()
    args = tool.Input(path="a/b.txt", content="x")
    assert (tool.name, tool.kind, tool.read_only, tool.risk) == (
        "write_file",
        "edit",
        False,
        "medium",
    )
    assert (tool.title(args), tool.paths(args), tool.always_ask(args)) == (
        "Write a/b.txt",
        ["a/b.txt"],
        None,
    )


# edit_file


async def test_edit_replaces_once_and_returns_a_diff(ctx, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")
    result = await edit(ctx, "a.py", "y = 2", "y = 3")
    assert result == ToolResult(
        content={"path": str(target), "replacements": 1},
        diff=Diff(path=str(target), old_text="x = 1\ny = 2\n", new_text="x = 1\ny = 3\n"),
    )
    assert target.read_text() == "x = 1\ny = 3\n"
    assert ctx.read_times == {target.resolve(): target.stat().st_mtime}


async def test_edit_identical_strings_is_an_error(ctx, tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    with pytest.raises(ToolError, match="identical"):
        await edit(ctx, "a.py", "x", "x")


async def test_edit_empty_old_string_points_to_write_file(ctx, tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    with pytest.raises(ToolError, match="use write_file"):
        await edit(ctx, "a.py", "", "y")


async def test_edit_not_found_gives_a_whitespace_hint(ctx, tmp_path):
    (tmp_path / "a.py").write_text("def f():\n\treturn 1\n")
    with pytest.raises(ToolError) as err:
        await edit(ctx, "a.py", "    return 1", "    return 2")
    assert str(err.value) == (
        f"old_string was not found in {tmp_path / 'a.py'}. It must match exactly, including "
        "whitespace, indentation (tabs vs spaces) and line breaks; read the file again and copy "
        "the text. Line 2 matches its first line when whitespace is ignored."
    )


async def test_edit_several_matches_names_the_count(ctx, tmp_path):
    (tmp_path / "a.py").write_text("a\na\na\n")
    with pytest.raises(ToolError, match=r"matches 3 times .* set replace_all"):
        await edit(ctx, "a.py", "a", "b")
    result = await edit(ctx, "a.py", "a", "b", replace_all=True)
    assert result.content == {"path": str(tmp_path / "a.py"), "replacements": 3}
    assert (tmp_path / "a.py").read_text() == "b\nb\nb\n"


async def test_edit_already_applied_does_not_write(ctx, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("new text\n")
    age(target)
    before = target.stat().st_mtime
    result = await edit(ctx, "a.py", "old text", "new text")
    assert result == {"path": str(target), "replacements": 0, "alreadyApplied": True}
    assert target.stat().st_mtime == before


async def test_edit_deleting_absent_text_is_not_already_applied(ctx, tmp_path):
    (tmp_path / "a.py").write_text("keep\n")
    with pytest.raises(ToolError, match="was not found"):
        await edit(ctx, "a.py", "gone\n", "")


async def test_edit_refuses_a_file_changed_since_it_was_read(ctx, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("v1\n")
    await read(ctx, "a.py")
    target.write_text("v2\n")
    age(target)
    with pytest.raises(ToolError, match="modified on disk since you last read it; read it again"):
        await edit(ctx, "a.py", "v2", "v3")
    assert target.read_text() == "v2\n"
    await read(ctx, "a.py")
    await edit(ctx, "a.py", "v2", "v3")
    assert target.read_text() == "v3\n"


async def test_edit_without_a_prior_read_is_allowed(ctx, tmp_path):
    (tmp_path / "a.py").write_text("v1\n")
    await edit(ctx, "a.py", "v1", "v2")
    await edit(ctx, "a.py", "v2", "v3")
    assert (tmp_path / "a.py").read_text() == "v3\n"


async def test_edit_after_write_is_fresh(ctx, tmp_path):
    await write(ctx, "a.py", "v1\n")
    await edit(ctx, "a.py", "v1", "v2")
    assert (tmp_path / "a.py").read_text() == "v2\n"


async def test_edit_crlf_file_with_lf_strings_keeps_crlf(ctx, tmp_path):
    target = tmp_path / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await edit(ctx, "win.txt", "one\ntwo\n", "uno\ndos\n")
    assert target.read_bytes() == b"uno\r\ndos\r\nthree\r\n"
    assert result.diff == Diff(
        path=str(target), old_text="one\r\ntwo\r\nthree\r\n", new_text="uno\r\ndos\r\nthree\r\n"
    )
    again = await edit(ctx, "win.txt", "one\ntwo\n", "uno\ndos\n")
    assert again == {"path": str(target), "replacements": 0, "alreadyApplied": True}


async def test_edit_lf_file_is_left_lf(ctx, tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a\nb\n")
    await edit(ctx, "a.txt", "a\nb", "c\nd")
    assert (tmp_path / "a.txt").read_bytes() == b"c\nd\n"


async def test_edit_keeps_bom_and_undecodable_bytes(ctx, tmp_path):
    target = tmp_path / "a.txt"
    target.write_bytes(b"\xef\xbb\xbfname = 1\ncaf\xe9\n")
    await edit(ctx, "a.txt", "name = 1", "name = 2")
    assert target.read_bytes() == b"\xef\xbb\xbfname = 2\ncaf\xe9\n"


async def test_edit_refuses_binary_and_missing_files(ctx, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"ab\x00cd")
    with pytest.raises(ToolError, match="binary file"):
        await edit(ctx, "b.bin", "ab", "xy")
    with pytest.raises(ToolError, match=re.escape(f"File not found: {tmp_path / 'c.py'}")):
        await edit(ctx, "c.py", "a", "b")


def test_edit_metadata():
    tool = EditFile()
    args = tool.Input(path="a.py", old_string="a", new_string="b")
    assert (tool.name, tool.kind, tool.risk, tool.read_only) == (
        "edit_file",
        "edit",
        "medium",
        False,
    )
    assert (tool.title(args), tool.paths(args), tool.always_ask(args)) == (
        "Edit a.py",
        ["a.py"],
        None,
    )


# paths and odd files


async def test_absolute_and_dotdot_paths_resolve_like_relative_ones(ctx, tmp_path):
    (tmp_path / "src").mkdir()
    target = tmp_path / "src" / "a.txt"
    target.write_text("x\n")
    for path in (str(target), "src/../src/a.txt", f"../{tmp_path.name}/src/a.txt"):
        assert (await read(ctx, path))["content"] == "1: x"
    result = await edit(ctx, str(target), "x", "y")
    assert result.content == {"path": str(target), "replacements": 1}


async def test_file_tools_reach_outside_the_workspace_permission_decides(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    ws.mkdir()
    outside.write_text("secret\n")
    ctx = ToolContext(cwd=ws)
    assert (await read(ctx, "../outside.txt"))["content"] == "1: secret"
    result = await write(ctx, str(outside), "new\n")
    assert result.content == {"path": str(outside), "bytes": 4}


@posix_only
async def test_symlink_pointing_out_reads_and_edits_the_target(tmp_path):
    ws, real = tmp_path / "ws", tmp_path / "real.txt"
    ws.mkdir()
    real.write_text("v1\n")
    (ws / "link.txt").symlink_to(real)
    ctx = ToolContext(cwd=ws)
    assert (await read(ctx, "link.txt"))["content"] == "1: v1"
    assert ctx.read_times == {real.resolve(): real.stat().st_mtime}
    await edit(ctx, "link.txt", "v1", "v2")
    assert real.read_text() == "v2\n"
    assert (ws / "link.txt").is_symlink()


@posix_only
async def test_write_and_edit_through_a_symlink_loop_are_clear_errors(ctx, tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(ToolError, match=r"Cannot write .*loop: Too many levels of symbolic links"):
        await write(ctx, "loop", "x")
    with pytest.raises(ToolError, match=r"Cannot access .*loop: Too many levels of symbolic links"):
        await edit(ctx, "loop", "a", "b")


async def test_edit_crlf_file_with_a_bom(ctx, tmp_path):
    target = tmp_path / "w.txt"
    target.write_bytes(b"\xef\xbb\xbfa = 1\r\nb = 2\r\n")
    assert (await read(ctx, "w.txt"))["content"] == "1: a = 1\n2: b = 2"
    await edit(ctx, "w.txt", "a = 1\nb = 2", "a = 10\nb = 20")
    assert target.read_bytes() == b"\xef\xbb\xbfa = 10\r\nb = 20\r\n"


async def test_edit_an_empty_file_finds_nothing(ctx, tmp_path):
    (tmp_path / "e.txt").write_bytes(b"")
    with pytest.raises(ToolError, match="old_string was not found"):
        await edit(ctx, "e.txt", "a", "b")


async def test_write_refuses_unencodable_text(ctx, tmp_path):
    with pytest.raises(ToolError, match="content is not valid Unicode"):
        await write(ctx, "a.txt", "bad \ud800 surrogate")
    assert not (tmp_path / "a.txt").exists()


async def test_unicode_paths_write_edit_list(ctx, tmp_path):
    await write(ctx, "répertoire/文件 1.txt", "ü\n")
    await edit(ctx, "répertoire/文件 1.txt", "ü", "ß")
    assert (tmp_path / "répertoire" / "文件 1.txt").read_text(encoding="utf-8") == "ß\n"
    listing = await ListDir().run(ctx, ListDir.Input(path="répertoire"))
    assert listing == {"path": str(tmp_path / "répertoire"), "entries": ["文件 1.txt"]}


async def test_binary_detection_is_a_nul_in_the_first_8_kib(ctx, tmp_path):
    (tmp_path / "late.bin").write_bytes(b"a\n" * 5000 + b"\x00")
    assert (await read(ctx, "late.bin", limit=1))["content"] == "1: a"
    (tmp_path / "early.bin").write_bytes(b"a\n" * 4000 + b"\x00")
    with pytest.raises(ToolError, match="binary file"):
        await read(ctx, "early.bin")


async def test_read_lone_cr_and_blank_lines(ctx, tmp_path):
    (tmp_path / "mac.txt").write_bytes(b"a\rb\n\n\r\n")
    assert await read(ctx, "mac.txt") == {
        "content": "1: a\rb\n2: \n3: ",
        "totalLines": 3,
        "startLine": 1,
        "endLine": 3,
    }


# list_dir


async def test_list_sorts_and_marks_directories(ctx, tmp_path):
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / ".hidden").write_text("")
    (tmp_path / "é.md").write_text("")
    result = await ListDir().run(ctx, ListDir.Input())
    assert result == {"path": str(tmp_path), "entries": [".hidden", "a/", "b.txt", "é.md"]}


@posix_only
async def test_list_marks_symlinks_including_broken_and_looping(ctx, tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "to_dir").symlink_to("real")
    (tmp_path / "dangling").symlink_to("missing.txt")
    (tmp_path / "loop").symlink_to("loop")
    result = await ListDir().run(ctx, ListDir.Input(path="."))
    assert result["entries"] == [
        "dangling -> missing.txt (broken)",
        "loop -> loop (broken)",
        "real/",
        "to_dir/ -> real",
    ]


async def test_list_caps_entries_with_a_note(ctx, tmp_path):
    for i in range(1005):
        (tmp_path / f"f{i:04d}").write_bytes(b"")
    result = await ListDir().run(ctx, ListDir.Input())
    assert len(result["entries"]) == 1000
    assert result["entries"][-1] == "f0999"
    assert result["note"] == "showing 1000 of 1005 entries; use glob to narrow"


async def test_list_errors(ctx, tmp_path):
    (tmp_path / "f.txt").write_text("")
    with pytest.raises(ToolError, match="is a file, not a directory; use read_file"):
        await ListDir().run(ctx, ListDir.Input(path="f.txt"))
    with pytest.raises(ToolError, match=re.escape(f"File not found: {tmp_path / 'nope'}")):
        await ListDir().run(ctx, ListDir.Input(path="nope"))


def test_list_metadata():
    tool = ListDir()
    assert (tool.name, tool.kind, tool.read_only) == ("list_dir", "read", True)
    assert (tool.title(tool.Input()), tool.paths(tool.Input(path="src"))) == ("List .", ["src"])


# registry


def test_builtin_tools_one_of_each_with_shared_jobs():
    jobs = BackgroundJobs()
    tools = builtin_tools(jobs=jobs)
    assert [t.name for t in tools] == [
        "read_file",
        "write_file",
        "edit_file",
        "edit_file_hashed",
        "list_dir",
        "grep",
        "glob",
        "bash",
        "bash_output",
        "kill_bash",
        "git",
        "todo_write",
        "ask_user_question",
        "web_fetch",
        "web_search",
    ]
    assert {t.jobs for t in tools if isinstance(t, Bash | BashOutput | KillBash)} == {jobs}
    assert all(t.spec()["parameters"]["type"] == "object" for t in tools)


def test_config_removes_tools():
    config = {"webFetch": {"enabled": False}, "tools": {"disallowed": ["Bash", "git"]}}
    names = [t.name for t in builtin_tools(config=config)]
    assert "web_fetch" not in names and "bash" not in names and "git" not in names
    assert "web_search" in names and "read_file" in names


def test_tools_by_name_indexes_and_rejects_duplicates():
    assert list(tools_by_name()) == [t.name for t in builtin_tools()]
    with pytest.raises(ValueError, match="duplicate tool name: read_file"):
        tools_by_name([ReadFile(), ReadFile()])
