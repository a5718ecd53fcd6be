import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from server.tools.base import Diff, ToolContext, ToolError, ToolResult
from server.tools.files import ReadFile, js_trim, line_tag
from server.tools.hashed import EditFileHashed

# Tags pinned from an independent computation (Node's crypto, base64url, String.prototype.trim).
HELLO = "LPJNul"
TAGS = {
    "def f():": "41aBSL",
    "return 1": "SG2a_7",
    "x = 1": "j_Q23v",
    "a": "ypeBEs",
    "b": "PiPoFg",
    "c": "Ln0sA6",
    "dup": "nrYgND",
    "head": "ny5tM6",
    "caf\ufffd": "-xVSwT",
}
CAFE = "caf\ufffd"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def read(ctx: ToolContext, path: str, **kw) -> dict:
    return await ReadFile().run(ctx, ReadFile.Input(path=path, hashed=True, **kw))


async def edit(ctx: ToolContext, path: str, anchor: str, expected: str, new: str):
    tool = EditFileHashed()
    args = tool.Input(path=path, anchor_hash=anchor, expected_line=expected, new_line=new)
    return await tool.run(ctx, args)


def age(path: Path, seconds: float = 10) -> None:
    st = path.stat()
    os.utime(path, (st.st_atime, st.st_mtime - seconds))


# line tags


@pytest.mark.parametrize(
    "line",
    ["hello", "  hello\t", "\ufeffhello\u3000", "\u00a0\u1680hello\u2028\u2029", "\v\fhello\r"],
)
def test_tag_ignores_javascript_whitespace_around_the_line(line):
    assert line_tag(line) == HELLO


@pytest.mark.parametrize(
    ("line", "tag"),
    [
        ("\u200bhello", "ApcNTA"),
        ("\u180ehello", "oibYll"),
        ("\x1chello", "gpXhfW"),
        ("\x85hello", "qlVLTH"),
        ("\u205fx\u205f", "LXEWQr"),
    ],
)
def test_tag_keeps_what_javascript_trim_keeps(line, tag):
    assert line_tag(line) == tag


@pytest.mark.parametrize("line", ["", " ", "\t\t", "\u3000\u00a0\ufeff", "\u2000\u200a\u202f"])
def test_blank_lines_have_the_blank_tag(line):
    assert line_tag(line) == "______"


@pytest.mark.skipif(not shutil.which("node"), reason="needs node to compare with")
def test_trim_matches_javascript_for_every_bmp_character():
    script = (
        "const out=[];for(let c=0;c<0x10000;c++){if(c>=0xd800&&c<0xe000)continue;"
        "if(String.fromCharCode(c).trim()==='')out.push(c)}console.log(out.join(','))"
    )
    node = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    expected = {int(c) for c in node.stdout.strip().split(",")}
    ours = {c for c in range(0x10000) if not 0xD800 <= c < 0xE000 and js_trim(chr(c)) == ""}
    assert ours == expected


# read_file hashed


async def test_hashed_read_prefixes_number_and_tag(ctx, tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n\nx = 1\n")
    assert await read(ctx, "a.py") == {
        "content": (
            f"1: {TAGS['def f():']}| def f():\n2: {TAGS['return 1']}|     return 1\n"
            f"3: ______| \n4: {TAGS['x = 1']}| x = 1"
        ),
        "totalLines": 4,
        "startLine": 1,
        "endLine": 4,
    }


async def test_hashed_read_with_offset_keeps_each_lines_tag(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    result = await read(ctx, "a.txt", offset=2, limit=1)
    assert result == {
        "content": f"2: {TAGS['b']}| b",
        "totalLines": 3,
        "startLine": 2,
        "endLine": 2,
    }


async def test_hashed_read_of_crlf_bom_and_invalid_utf8(ctx, tmp_path):
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfhead\r\ncaf\xe9\r\n")
    assert (await read(ctx, "w.txt"))["content"] == (
        f"1: {TAGS['head']}| head\n2: {TAGS[CAFE]}| {CAFE}"
    )


async def test_hashed_read_tags_the_whole_of_a_cut_line(ctx, tmp_path):
    long = "y" * 3000
    (tmp_path / "min.js").write_text(long + "\n")
    content = (await read(ctx, "min.js"))["content"]
    assert content == f"1: {line_tag(long)}| " + "y" * 2000 + "… [line truncated, 3000 characters]"


async def test_hashed_read_of_an_empty_file(ctx, tmp_path):
    (tmp_path / "e.txt").write_bytes(b"")
    assert (await read(ctx, "e.txt"))["content"] == ""


# edit_file_hashed


async def test_edit_replaces_the_tagged_line_verbatim(ctx, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("def f():\n    return 1\n")
    result = await edit(ctx, "a.py", TAGS["return 1"], "return 1", "    return 2  # two")
    assert result == ToolResult(
        content={"path": str(target), "line": 2},
        diff=Diff(
            path=str(target),
            old_text="def f():\n    return 1\n",
            new_text="def f():\n    return 2  # two\n",
        ),
    )
    assert target.read_text() == "def f():\n    return 2  # two\n"
    assert ctx.read_times == {target.resolve(): target.stat().st_mtime}


async def test_edit_keeps_crlf_in_a_crlf_file(ctx, tmp_path):
    target = tmp_path / "w.txt"
    target.write_bytes(b"a\r\nb\r\nc")
    await edit(ctx, "w.txt", TAGS["b"], "b", "B")
    await edit(ctx, "w.txt", TAGS["c"], "c", "C")
    assert target.read_bytes() == b"a\r\nB\r\nC"


async def test_edit_gives_the_line_the_dominant_ending_and_leaves_others(ctx, tmp_path):
    (tmp_path / "lf.txt").write_bytes(b"a\r\nb\nc\r\nd\n")
    await edit(ctx, "lf.txt", TAGS["a"], "a", "A")
    assert (tmp_path / "lf.txt").read_bytes() == b"A\nb\nc\r\nd\n"
    (tmp_path / "crlf.txt").write_bytes(b"a\nb\r\nc\r\n")
    await edit(ctx, "crlf.txt", TAGS["a"], "a", "A")
    assert (tmp_path / "crlf.txt").read_bytes() == b"A\r\nb\r\nc\r\n"


async def test_edit_keeps_a_missing_final_newline_and_a_present_one(ctx, tmp_path):
    (tmp_path / "n.txt").write_bytes(b"a\nb")
    await edit(ctx, "n.txt", TAGS["b"], "b", "B")
    assert (tmp_path / "n.txt").read_bytes() == b"a\nB"
    (tmp_path / "y.txt").write_bytes(b"a\nb\n")
    await edit(ctx, "y.txt", TAGS["b"], "b", "B")
    assert (tmp_path / "y.txt").read_bytes() == b"a\nB\n"


async def test_edit_keeps_the_bom_and_undecodable_bytes(ctx, tmp_path):
    target = tmp_path / "bom.txt"
    target.write_bytes(b"\xef\xbb\xbfhead\ncaf\xe9\n")
    await edit(ctx, "bom.txt", TAGS["head"], "head", "top")
    assert target.read_bytes() == b"\xef\xbb\xbftop\ncaf\xe9\n"
    await edit(ctx, "bom.txt", line_tag("top"), "top", "\ufeffagain")
    assert target.read_bytes() == b"\xef\xbb\xbfagain\ncaf\xe9\n"


async def test_edit_an_undecodable_line_by_the_tag_read_showed(ctx, tmp_path):
    target = tmp_path / "latin.txt"
    target.write_bytes(b"caf\xe9\nok\n")
    await edit(ctx, "latin.txt", TAGS[CAFE], CAFE, "café")
    assert target.read_bytes() == "café\nok\n".encode()


async def test_edit_compares_expected_line_without_surrounding_whitespace(ctx, tmp_path):
    (tmp_path / "a.py").write_text("\tx = 1\n")
    await edit(ctx, "a.py", f" {TAGS['x = 1']}| ", "    x = 1\u00a0", "\tx = 2")
    assert (tmp_path / "a.py").read_text() == "\tx = 2\n"


async def test_edit_a_unique_blank_line(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\n   \nb\n")
    await edit(ctx, "a.txt", "______", "", "middle")
    assert (tmp_path / "a.txt").read_text() == "a\nmiddle\nb\n"


async def test_hash_mismatch_says_to_read_again(ctx, tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("a\n")
    with pytest.raises(ToolError) as err:
        await edit(ctx, "a.txt", "zzzzzz", "a", "b")
    assert str(err.value) == (
        f"hash_mismatch: no line in {target} has the tag 'zzzzzz'. The file may have changed "
        "since you read it, or the tag was mistyped (tags are the 6 characters before `|`). "
        "Read the file again with read_file hashed: true and use a current tag."
    )
    (tmp_path / "e.txt").write_bytes(b"")
    with pytest.raises(ToolError, match=r"^hash_mismatch: "):
        await edit(ctx, "e.txt", "______", "", "x")


async def test_ambiguous_anchor_lists_each_line_with_context(ctx, tmp_path):
    target = tmp_path / "d.txt"
    target.write_text("dup\na\nb\nc\nx = 1\ndup\n")
    with pytest.raises(ToolError) as err:
        await edit(ctx, "d.txt", TAGS["dup"], "dup", "one")
    t = TAGS
    assert str(err.value) == (
        f"ambiguous_anchor: 2 lines of {target} have the tag '{t['dup']}' (lines 1, 6), so it "
        "does not say which one to change. Use edit_file with an old_string that includes "
        "neighbouring lines to make it unique.\n\n"
        f"line 1:\n> 1: {t['dup']}| dup\n  2: {t['a']}| a\n  3: {t['b']}| b\n  4: {t['c']}| c"
        "\n\n"
        f"line 6:\n  3: {t['b']}| b\n  4: {t['c']}| c\n  5: {t['x = 1']}| x = 1\n"
        f"> 6: {t['dup']}| dup"
    )
    assert target.read_text() == "dup\na\nb\nc\nx = 1\ndup\n"


async def test_ambiguous_anchor_lists_at_most_ten(ctx, tmp_path):
    (tmp_path / "d.txt").write_text("dup\n" * 12)
    with pytest.raises(ToolError) as err:
        await edit(ctx, "d.txt", TAGS["dup"], "dup", "one")
    message = str(err.value)
    assert message.count("\nline ") == 10
    assert message.endswith("(2 more not shown)")


async def test_content_mismatch_shows_the_current_line(ctx, tmp_path):
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    with pytest.raises(ToolError) as err:
        await edit(ctx, "a.py", TAGS["x = 1"], "x = 10", "x = 2")
    assert str(err.value) == (
        f"content_mismatch: line 1 of {target} has the tag '{TAGS['x = 1']}' but reads 'x = 1', "
        "not 'x = 10' (compared with surrounding whitespace ignored). Check the line you mean "
        "and send its current text as expected_line."
    )
    assert target.read_text() == "x = 1\n"


@pytest.mark.parametrize("new", ["two\nlines", "cr\r", "\r\n"])
async def test_new_line_must_be_one_line(ctx, tmp_path, new):
    (tmp_path / "a.txt").write_text("a\n")
    with pytest.raises(ToolError) as err:
        await edit(ctx, "a.txt", TAGS["a"], "a", new)
    assert str(err.value) == (
        "invalid_new_line: new_line must be a single line without newline characters; "
        "to change several lines use edit_file"
    )


async def test_identical_new_line_is_an_error(ctx, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    with pytest.raises(ToolError, match=r"^no_change: line 1 already reads new_line"):
        await edit(ctx, "a.txt", TAGS["a"], "a", "a")


async def test_edit_refuses_a_file_changed_since_the_hashed_read(ctx, tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("a\nb\n")
    await read(ctx, "a.txt")
    target.write_text("a\nb\nc\n")
    age(target)
    with pytest.raises(ToolError, match="modified on disk since you last read it"):
        await edit(ctx, "a.txt", TAGS["a"], "a", "A")
    await read(ctx, "a.txt")
    await edit(ctx, "a.txt", TAGS["a"], "a", "A")
    assert target.read_text() == "A\nb\nc\n"


async def test_edit_refuses_binary_missing_and_directories(ctx, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"a\n\x00\n")
    with pytest.raises(ToolError, match="binary file"):
        await edit(ctx, "b.bin", TAGS["a"], "a", "b")
    with pytest.raises(ToolError, match=re.escape(f"File not found: {tmp_path / 'no.txt'}")):
        await edit(ctx, "no.txt", TAGS["a"], "a", "b")
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await edit(ctx, "d", TAGS["a"], "a", "b")


async def test_edit_through_a_symlink_changes_the_target(ctx, tmp_path):
    if os.name == "nt":
        pytest.skip("symlinks need privileges on Windows")
    (tmp_path / "real.txt").write_text("a\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await edit(ctx, "link.txt", TAGS["a"], "a", "b")
    assert (tmp_path / "real.txt").read_text() == "b\n"
    assert (tmp_path / "link.txt").is_symlink()


def test_edit_hashed_metadata():
    tool = EditFileHashed()
    args = tool.Input(path="src/a.py", anchor_hash="abc123", expected_line="x", new_line="y")
    assert (tool.name, tool.kind, tool.risk, tool.read_only) == (
        "edit_file_hashed",
        "edit",
        "medium",
        False,
    )
    assert (tool.title(args), tool.paths(args), tool.always_ask(args)) == (
        "Edit src/a.py (line abc123)",
        ["src/a.py"],
        None,
    )
    assert set(tool.spec()["parameters"]["required"]) == {
        "path",
        "anchor_hash",
        "expected_line",
        "new_line",
    }
