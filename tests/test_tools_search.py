import os
import re
import sys
from pathlib import Path

import anyio
import pytest

from server.tools.base import ToolContext, ToolError
from server.tools.search import Glob, Grep, rg_path


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def put(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


async def grep(ctx: ToolContext, pattern: str, **kw) -> dict:
    return await Grep().run(ctx, Grep.Input(pattern=pattern, **kw))


async def glob(ctx: ToolContext, pattern: str, **kw) -> dict:
    return await Glob().run(ctx, Glob.Input(pattern=pattern, **kw))


def test_rg_is_found_next_to_the_interpreter():
    name = "rg.exe" if os.name == "nt" else "rg"
    assert rg_path() == str(Path(sys.executable).parent / name)


# grep


async def test_grep_returns_matches_relative_to_cwd(ctx, tmp_path):
    put(tmp_path, {"src/app.py": "import os\nTODO: fix\n", "b.txt": "todo\nTODO later\n"})
    assert await grep(ctx, "TODO") == {
        "matchCount": 2,
        "filesWithMatches": 2,
        "matches": [
            {"file": "b.txt", "line": 2, "content": "TODO later"},
            {"file": "src/app.py", "line": 2, "content": "TODO: fix"},
        ],
        "truncated": False,
    }


async def test_grep_case_insensitive(ctx, tmp_path):
    put(tmp_path, {"a.txt": "Hello\nhello\nHELLO\n"})
    result = await grep(ctx, "hello", caseSensitive=False)
    assert [m["line"] for m in result["matches"]] == [1, 2, 3]
    assert (await grep(ctx, "hello"))["matchCount"] == 1


async def test_grep_glob_and_path_narrow_the_search(ctx, tmp_path):
    put(tmp_path, {"src/a.py": "x = 1\n", "src/a.js": "x = 1\n", "lib/b.py": "x = 1\n"})
    by_glob = await grep(ctx, "x =", glob="*.py")
    assert [m["file"] for m in by_glob["matches"]] == ["lib/b.py", "src/a.py"]
    by_path = await grep(ctx, "x =", path="src")
    assert [m["file"] for m in by_path["matches"]] == ["src/a.js", "src/a.py"]
    one_file = await grep(ctx, "x =", path="src/a.js")
    assert one_file["matches"] == [{"file": "src/a.js", "line": 1, "content": "x = 1"}]


async def test_grep_no_match_is_not_an_error(ctx, tmp_path):
    put(tmp_path, {"a.txt": "nothing here\n"})
    assert await grep(ctx, "needle") == {
        "matchCount": 0,
        "filesWithMatches": 0,
        "matches": [],
        "truncated": False,
    }


async def test_grep_bad_regex_reports_rg_stderr(ctx, tmp_path):
    put(tmp_path, {"a.txt": "x\n"})
    with pytest.raises(ToolError, match=r"(?s)grep failed: rg: regex parse error.*unclosed group"):
        await grep(ctx, "(")


async def test_grep_missing_path(ctx, tmp_path):
    with pytest.raises(ToolError, match=re.escape(f"Path not found: {tmp_path / 'nope'}")):
        await grep(ctx, "x", path="nope")


async def test_grep_caps_per_file_and_total(ctx, tmp_path):
    put(tmp_path, {f"f{i:02d}.txt": "hit\n" * 12 for i in range(15)})
    result = await grep(ctx, "hit")
    assert (result["matchCount"], result["filesWithMatches"], result["truncated"]) == (
        180,
        15,
        True,
    )
    assert len(result["matches"]) == 100
    assert [m["file"] for m in result["matches"]].count("f00.txt") == 10
    assert result["matches"][-1] == {"file": "f09.txt", "line": 10, "content": "hit"}
    assert result["truncatedFiles"] == [
        {"file": f"f{i:02d}.txt", "matchCount": 12, "shown": 10 if i < 10 else 0}
        for i in range(15)
    ]
    assert "offset=10 " in result["more"]


async def test_grep_offset_resumes_at_the_first_line_left_out(ctx, tmp_path):
    put(tmp_path, {"a.txt": "hit\n" * 12, "b.txt": "hit\n" * 3})
    first = await grep(ctx, "hit", perFile=5)
    assert [(m["file"], m["line"]) for m in first["matches"]] == [
        *[("a.txt", n) for n in range(1, 6)],
        *[("b.txt", n) for n in range(1, 4)],
    ]
    assert first["truncatedFiles"] == [{"file": "a.txt", "matchCount": 12, "shown": 5}]
    assert "offset=5 " in first["more"]
    rest = await grep(ctx, "hit", offset=5, perFile=100)
    assert (rest["matchCount"], rest["truncated"], len(rest["matches"])) == (15, False, 10)
    assert rest["matches"][0] == {"file": "a.txt", "line": 6, "content": "hit"}


async def test_grep_offset_past_the_end_lists_nothing(ctx, tmp_path):
    put(tmp_path, {"a.txt": "hit\n" * 3})
    assert await grep(ctx, "hit", offset=3) == {
        "matchCount": 3,
        "filesWithMatches": 1,
        "matches": [],
        "truncated": False,
    }


async def test_grep_cuts_long_lines(ctx, tmp_path):
    put(tmp_path, {"min.js": "needle" + "y" * 500 + "\r\n"})
    [match] = (await grep(ctx, "needle"))["matches"]
    assert match["content"] == "needle" + "y" * 194 + "…"


async def test_grep_honours_gitignore_and_skips_hidden_and_binary(ctx, tmp_path):
    put(
        tmp_path,
        {
            ".gitignore": "build/\n",
            "build/out.txt": "needle\n",
            ".cache/x.txt": "needle\n",
            ".secret": "needle\n",
            "blob.bin": b"\x00\x01needle\n",
            "ok.txt": "needle\n",
        },
    )
    assert [m["file"] for m in (await grep(ctx, "needle"))["matches"]] == ["ok.txt"]


async def test_grep_outside_cwd_gives_absolute_paths(tmp_path):
    put(tmp_path, {"other/a.txt": "needle\n"})
    (tmp_path / "ws").mkdir()
    ctx = ToolContext(cwd=tmp_path / "ws")
    result = await grep(ctx, "needle", path=str(tmp_path / "other"))
    assert result["matches"] == [
        {"file": (tmp_path / "other" / "a.txt").as_posix(), "line": 1, "content": "needle"}
    ]


async def test_grep_unicode_paths_and_content(ctx, tmp_path):
    put(tmp_path, {"données/файл.txt": "naïve café\n"})
    result = await grep(ctx, "café")
    assert result["matches"] == [{"file": "données/файл.txt", "line": 1, "content": "naïve café"}]


def rg_children() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        if comm == "rg" and int(rest.split()[1]) == os.getpid():
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc and mkfifo")
async def test_grep_cancel_kills_rg(ctx, tmp_path):
    os.mkfifo(tmp_path / "pipe")  # rg blocks opening it: a search that never ends on its own
    async def cancel_once_rg_runs(scope: anyio.CancelScope) -> None:
        while not rg_children():
            await anyio.sleep(0.02)
        scope.cancel()

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_rg_runs, tg.cancel_scope)
            await grep(ctx, "x", path="pipe")
    assert rg_children() == []


def test_grep_metadata():
    tool = Grep()
    args = tool.Input(pattern="def main", path="src")
    assert (tool.name, tool.kind, tool.read_only) == ("grep", "search", True)
    assert (tool.title(args), tool.paths(args)) == ("Grep `def main` in src", ["src"])
    assert tool.paths(tool.Input(pattern="x")) == []


# glob


def touch(root: Path, names: list[str]) -> None:
    """Create files with strictly increasing mtimes, in list order."""
    for age, name in enumerate(reversed(names)):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (1_700_000_000 - age, 1_700_000_000 - age))


async def test_glob_lists_newest_first(ctx, tmp_path):
    touch(tmp_path, ["a.py", "src/deep/c.py", "b.txt", "src/b.py"])
    assert await glob(ctx, "*.py") == {
        "files": ["src/b.py", "src/deep/c.py", "a.py"],
        "totalFiles": 3,
        "truncated": False,
    }


async def test_glob_patterns_with_a_slash_are_relative_to_path(ctx, tmp_path):
    touch(tmp_path, ["src/a.ts", "src/lib/b.ts", "other/src/c.ts"])
    assert (await glob(ctx, "src/**/*.ts"))["files"] == ["src/lib/b.ts", "src/a.ts"]
    assert (await glob(ctx, "lib/*.ts", path="src"))["files"] == ["src/lib/b.ts"]


async def test_glob_skips_hidden_dirs_node_modules_and_gitignored(ctx, tmp_path):
    touch(
        tmp_path,
        [
            ".git/config.js",
            ".venv/x.js",
            "node_modules/pkg/index.js",
            "web/node_modules/y.js",
            "dist/app.js",
            ".eslintrc.js",
            "app.js",
        ],
    )
    (tmp_path / ".gitignore").write_text("dist/\n")
    assert (await glob(ctx, "*.js"))["files"] == ["app.js", ".eslintrc.js"]
    inside = await glob(ctx, "*.js", path="node_modules")
    assert inside["files"] == ["node_modules/pkg/index.js"]


async def test_glob_limit_truncates(ctx, tmp_path):
    touch(tmp_path, [f"f{i}.txt" for i in range(5)])
    assert await glob(ctx, "*.txt", limit=2) == {
        "files": ["f4.txt", "f3.txt"],
        "totalFiles": 5,
        "truncated": True,
    }


async def test_glob_no_files(ctx, tmp_path):
    assert await glob(ctx, "*.nothing") == {"files": [], "totalFiles": 0, "truncated": False}


async def test_glob_errors(ctx, tmp_path):
    touch(tmp_path, ["a.txt"])
    with pytest.raises(ToolError, match="is not a directory"):
        await glob(ctx, "*", path="a.txt")
    with pytest.raises(ToolError, match="Path not found"):
        await glob(ctx, "*", path="missing")
    with pytest.raises(ToolError, match=r"glob failed: rg: .*a\["):
        await glob(ctx, "a[")


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
async def test_glob_survives_symlink_loops_and_unicode_names(ctx, tmp_path):
    touch(tmp_path, ["données/файл.md"])
    (tmp_path / "données" / "loop").symlink_to(tmp_path / "données")
    (tmp_path / "self").symlink_to("self")
    assert (await glob(ctx, "*.md"))["files"] == ["données/файл.md"]


def test_glob_metadata():
    tool = Glob()
    args = tool.Input(pattern="**/*.py", path="src")
    assert (tool.name, tool.kind, tool.read_only) == ("glob", "search", True)
    assert (tool.title(args), tool.paths(args)) == ("Find `**/*.py` in src", ["src"])
