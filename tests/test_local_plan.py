"""The local model's task steps, edit step, result rendering and grounding, over a runtime
double (no model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from server.providers import local_ground as ground
from server.providers import local_plan, local_results, local_turn
from server.providers.local_schema import answer_branch
from server.providers.messages import (
    Message,
    ModelRequest,
    TextDelta,
    TextPart,
    ToolCallReady,
    ToolResultPart,
    ToolSpec,
)
from tests.test_provider_local import READ, ScriptedRuntime, collect, context, sent_schema

EDIT = ToolSpec("edit_file", "Replace a string.", {"type": "object", "properties": {}})
GREP = ToolSpec("grep", "Search file contents.", {"type": "object", "properties": {}})
LINES = ["[server]", "    port = 80", "    host = a", "    port = 80"]


def read_result(call_id: str, lines: list[str]) -> ToolResultPart:
    content = "\n".join(f"{n}: {line}" for n, line in enumerate(lines, 1))
    payload = {"content": content, "totalLines": len(lines), "startLine": 1}
    return ToolResultPart(call_id, "read_file", json.dumps({**payload, "endLine": len(lines)}))


def after_edit_read(ws: Path) -> list[Message]:
    call = local_plan.to_call({"task": "edit", "path": "app.ini"})
    return [
        Message("user", [TextPart("Set the host of app.ini to b.")]),
        Message("assistant", [call]),
        Message("tool", [read_result(call.id, LINES)]),
        context(str(ws)),
    ]


async def test_after_an_edit_reads_its_file_the_model_picks_one_of_its_lines(
    tmp_path: Path,
) -> None:
    runtime = ScriptedRuntime('{"new_line": "host = b", "replaces": "host = a"}')
    req = collect_request(after_edit_read(tmp_path))
    events = await collect(runtime, req)
    assert sent_schema(runtime) == local_plan.edit_schema(LINES)
    choices = sent_schema(runtime)["anyOf"][0]["properties"]["replaces"]["enum"]
    assert choices == ["[server]", "port = 80", "host = a"]
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in calls] == [
        (
            "edit_file",
            {"path": "app.ini", "old_string": "    host = a", "new_string": "    host = b"},
        )
    ]
    assert local_plan.step_of(calls[0]) == {"new_line": "host = b", "replaces": "host = a"}


async def test_an_appended_line_follows_the_shortest_unique_tail(tmp_path: Path) -> None:
    runtime = ScriptedRuntime('{"append": "    debug = no"}')
    events = await collect(runtime, collect_request(after_edit_read(tmp_path)))
    (call,) = [e.call for e in events if isinstance(e, ToolCallReady)]
    tail = "    host = a\n    port = 80"
    assert call.arguments == {
        "path": "app.ini",
        "old_string": tail,
        "new_string": tail + "\n    debug = no",
    }
    assert local_plan.step_of(call) == {"append": "    debug = no"}


def collect_request(messages: list[Message]) -> ModelRequest:
    return ModelRequest(model="m", system="", messages=messages, tools=[READ, EDIT])


def grep_turn(answer_request: str) -> list[Message]:
    call = local_plan.to_call({"task": "find_definition", "name": "load"})
    match = {"file": "pkg/io.py", "line": 4, "content": "def load(path):"}
    result = {"matchCount": 1, "filesWithMatches": 1, "matches": [match], "truncated": False}
    return [
        Message("user", [TextPart(answer_request)]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call.id, "grep", json.dumps(result))]),
    ]


def answer_of(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_grounded_answer_is_shown_as_it_is() -> None:
    runtime = ScriptedRuntime('{"answer": "load is defined in pkg/io.py, line 4."}')
    events = await collect(runtime, collect_request(grep_turn("Where is load defined?")))
    assert answer_of(events) == "load is defined in pkg/io.py, line 4."
    assert len(runtime.bodies) == 1


async def test_an_answer_naming_a_file_no_result_shows_is_retried_then_replaced() -> None:
    invented = '{"answer": "load is defined in pkg/loader.py."}'
    runtime = ScriptedRuntime(invented, invented)
    events = await collect(runtime, collect_request(grep_turn("Where is load defined?")))
    assert "do not show pkg/loader.py" in runtime.bodies[1]["messages"][-1]["content"]
    assert answer_of(events) == (
        "I am not sure of the answer. What I found: 1 match in 1 file: "
        "pkg/io.py, line 4: def load(path):. " + ground.CLOUD_HINT
    )


async def test_a_retried_answer_that_is_grounded_replaces_the_invented_one() -> None:
    runtime = ScriptedRuntime(
        '{"answer": "It is in \\"pkg/main.py\\"."}', '{"answer": "It is in pkg/io.py."}'
    )
    events = await collect(runtime, collect_request(grep_turn("Where is load defined?")))
    assert answer_of(events) == "It is in pkg/io.py."


def test_facts_are_looked_up_in_the_evidence() -> None:
    evidence = ground.Evidence(["notes/ideas.txt: 5 lines\n1: Export to PDF\n2: Add a theme"])
    assert ground.unfounded('ideas.txt says "Export to PDF" first; it has 5 lines.', evidence) == []
    assert ground.unfounded("It has 4 lines.", evidence) == []  # one less than a number shown
    assert ground.unfounded('todo.md says "Buy bread", in 12 lines.', evidence) == [
        "todo.md",
        "Buy bread",
        "12",
    ]
    assert ground.unfounded("Ledger is a tool, e.g. for bookkeeping.", evidence) == []


def test_example_text_counts_only_when_the_evidence_lacks_it() -> None:
    shots = [
        {"role": "user", "content": "Read a/bed.txt"},
        {
            "role": "user",
            "content": "<tool_response>\na/bed.txt: 1 line\n1: feed the cat\n</tool_response>",
        },
    ]
    phrases = ground.example_phrases(shots)
    assert {"a/bed.txt", "feed the cat"} <= phrases
    empty = ground.Evidence(["x"])
    assert ground.copied_example("It says Feed the  cat.", empty, phrases) == "feed the cat"
    assert (
        ground.copied_example("It says feed the cat.", ground.Evidence(["feed the cat"]), phrases)
        is None
    )


def test_grep_and_listing_results_spell_out_what_was_found() -> None:
    match = {"file": "src/a.py", "line": 3, "content": "    def run():"}
    found = {"matchCount": 1, "filesWithMatches": 1, "matches": [match], "truncated": False}
    assert local_results.render("grep", {}, json.dumps(found)) == (
        "1 match in 1 file:\nsrc/a.py, line 3: def run():"
    )
    none = {"matchCount": 0, "filesWithMatches": 0, "matches": [], "truncated": False}
    assert local_results.render("grep", {}, json.dumps(none)) == "no matches: no file contains it"
    listing = {"path": "/ws/src", "entries": ["a.py", "b.py", "lib/"]}
    assert local_results.render("list_dir", {"path": "src"}, json.dumps(listing), cwd="/ws") == (
        "folder src: 2 files and 1 folder\nfiles (2): a.py, b.py\nfolders (1): lib/\n"
        + local_results.LISTING_NOTE
    )
    assert local_results.render("read_file", {}, "File not found: /ws/x.txt", cwd="/ws") == (
        "File not found: x.txt"
    )


def test_a_definition_is_searched_for_with_the_words_that_define_names() -> None:
    call = local_plan.to_call({"task": "find_definition", "name": "Account"})
    pattern = call.arguments["pattern"]
    for line in ("class Account:", "def Account(x):", "Account = make()", "const Account = 1"):
        assert re.search(pattern, line), line
    for line in ("a = Account()", "# Accounts", "def AccountSet():"):
        assert not re.search(pattern, line), line
    assert local_plan.step_of(call) == {"task": "find_definition", "name": "Account"}


async def test_a_call_copying_the_examples_is_refused_and_the_answer_taken_instead() -> None:
    call = local_plan.to_call({"task": "read", "path": "docs/api.md"})
    messages = [
        Message("user", [TextPart("What is in the file docs/api.md?")]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call.id, "read_file", "Permission denied", is_error=True)]),
    ]
    runtime = ScriptedRuntime(
        '{"task": "find_text", "text": "FROST_LIMIT"}',
        '{"answer": "There is no file docs/api.md."}',
    )
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, EDIT, GREP])
    events = await collect(runtime, req)
    assert not any(isinstance(e, ToolCallReady) for e in events)
    assert sent_schema(runtime) != answer_branch()
    assert "comes from the worked example" in runtime.bodies[1]["messages"][-1]["content"]
    assert sent_schema(runtime, 1) == answer_branch()
    assert answer_of(events) == "There is no file docs/api.md."


async def test_the_first_look_at_a_request_naming_a_file_is_at_that_file(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    runtime = ScriptedRuntime('{"task": "read", "path": "run.sh"}')
    messages = [Message("user", [TextPart("What does run.sh do?")]), context(str(tmp_path))]
    await collect(
        runtime, ModelRequest(model="m", system="", messages=messages, tools=[READ, GREP])
    )
    offered = [k.name for k in local_plan.offered([READ, GREP])]
    assert {"find_definition", "find_text", "outline"} <= set(offered)
    path_kinds = [k for k in local_plan.offered([READ, GREP]) if k.name in local_plan.PATH_KINDS]
    assert sent_schema(runtime) == local_plan.plan_schema(path_kinds, answer=False)


def test_a_definition_is_sought_by_a_name_never_a_file_name() -> None:
    (kind,) = [k for k in local_plan.KINDS if k.name == "find_definition"]
    pattern = local_plan.kind_branch(kind)["properties"]["name"]["pattern"]
    assert re.fullmatch(pattern.strip("^$"), "load_csv")
    assert not re.fullmatch(pattern.strip("^$"), "release.sh")


async def test_a_named_file_that_is_not_there_is_answered_at_once() -> None:
    call = local_plan.to_call({"task": "read", "path": "docs/api.md"})
    missing = ToolResultPart(call.id, "read_file", "File not found: docs/api.md", is_error=True)
    messages = [
        Message("user", [TextPart("What is in the file docs/api.md?")]),
        Message("assistant", [call]),
        Message("tool", [missing]),
    ]
    runtime = ScriptedRuntime('{"answer": "There is no file docs/api.md."}')
    events = await collect(runtime, collect_request(messages))
    assert sent_schema(runtime) == answer_branch()
    assert answer_of(events) == "There is no file docs/api.md."


def test_a_one_line_edit_replaces_the_line_it_resembles_unless_the_request_names_another() -> None:
    lines = ["def open(name):", "    return Box(name)", "    # TODO: refunds"]
    step = {"new_line": "# TODO: refunds later", "replaces": "return Box(name)"}
    call = local_plan.edit_call("a.py", lines, step, request="Make the TODO say refunds later.")
    assert call.arguments["old_string"] == "    # TODO: refunds"
    assert call.arguments["new_string"] == "    # TODO: refunds later"
    named = local_plan.edit_call("a.py", lines, step, request="Replace return Box(name).")
    assert named.arguments["old_string"] == "    return Box(name)"


def test_a_rewritten_line_keeps_the_indentation_comment_marker_and_quotes_of_the_old() -> None:
    lines = ["    # TODO: refunds", 'NAME = "a"', "    x = 1"]

    def rewritten(new: str, old: str) -> str:
        step = {"new_line": new, "replaces": old}
        return local_plan.edit_call("a.py", lines, step, request=old).arguments["new_string"]

    assert rewritten("TODO: refunds later", "# TODO: refunds") == "    # TODO: refunds later"
    assert rewritten("NAME = 'b'", 'NAME = "a"') == 'NAME = "b"'
    assert rewritten("x = 2", "x = 1") == "    x = 2"


async def test_writing_over_an_existing_file_is_refused_for_an_edit(tmp_path: Path) -> None:
    (tmp_path / "week.txt").write_text("Monday: soup\n")
    write = ToolSpec("write_file", "Write a file.", {"type": "object", "properties": {}})
    messages = [Message("user", [TextPart("Append 'Friday: curry' to week.txt.")])]
    messages.append(context(str(tmp_path)))
    runtime = ScriptedRuntime(
        '{"task": "write", "path": "week.txt", "content": "Friday: curry"}',
        '{"task": "edit", "path": "week.txt"}',
    )
    tools = [READ, EDIT, write]
    events = await collect(
        runtime, ModelRequest(model="m", system="", messages=messages, tools=tools)
    )
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, local_plan.kind_of(c)) for c in calls] == [("read_file", "edit")]
    assert "week.txt already exists" in runtime.bodies[1]["messages"][-1]["content"]
    kinds = [k.name for k in local_plan.offered(tools)]
    assert "write" in kinds and "write" not in json.dumps(sent_schema(runtime, 1))


LIST = ToolSpec("list_dir", "List a folder.", {"type": "object", "properties": {}})


def listed_turn(ws: Path, request: str) -> list[Message]:
    """The request, then a listing of plans/ (one file in it), in workspace `ws`."""
    (ws / "plans").mkdir()
    (ws / "plans" / "roadmap.txt").write_text("Ship the parser\nThen the lexer\n")
    call = local_plan.to_call({"task": "list", "path": "plans"})
    listing = {"path": str(ws / "plans"), "entries": ["roadmap.txt"]}
    return [
        Message("user", [TextPart(request)]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call.id, "list_dir", json.dumps(listing))]),
        context(str(ws)),
    ]


async def test_a_file_named_by_a_listing_is_read_in_the_listed_folder(tmp_path: Path) -> None:
    messages = listed_turn(tmp_path, "What is the first line of the file in plans?")
    runtime = ScriptedRuntime('{"task": "read", "path": "roadmap.txt"}')
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, LIST, GREP])
    events = await collect(runtime, req)
    (call,) = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert (call.name, call.arguments) == ("read_file", {"path": "plans/roadmap.txt"})


async def test_a_question_about_a_files_lines_is_not_answered_from_a_listing(
    tmp_path: Path,
) -> None:
    messages = listed_turn(tmp_path, "Tell me the first line of the file in plans.")
    runtime = ScriptedRuntime('{"task": "read", "path": "plans/roadmap.txt"}')
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, LIST, GREP])
    await collect(runtime, req)
    schema = json.dumps(sent_schema(runtime))
    assert "answer" not in schema and '"read"' in schema
    assert '"enum": ["plans/roadmap.txt"]' in schema


async def test_a_question_about_a_folder_is_answered_from_its_listing(tmp_path: Path) -> None:
    messages = listed_turn(tmp_path, "Which files does the plans folder hold?")
    runtime = ScriptedRuntime('{"answer": "plans holds 1 file, roadmap.txt."}')
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, LIST, GREP])
    events = await collect(runtime, req)
    assert answer_of(events) == "plans holds 1 file, roadmap.txt."


async def test_reading_a_folder_or_an_invented_file_in_a_named_folder_lists_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "roadmap.txt").write_text("Ship the parser\n")
    request = "What is the first line of the file inside plans/?"
    for path in ("plans/", "plans/notes.md"):
        messages = [Message("user", [TextPart(request)]), context(str(tmp_path))]
        runtime = ScriptedRuntime(json.dumps({"task": "read", "path": path}))
        req = ModelRequest(model="m", system="", messages=messages, tools=[READ, LIST, GREP])
        events = await collect(runtime, req)
        (call,) = [e.call for e in events if isinstance(e, ToolCallReady)]
        assert (call.name, call.arguments) == ("list_dir", {"path": "plans"}), path


async def test_an_edit_that_leaves_its_line_as_it_was_is_asked_again(tmp_path: Path) -> None:
    runtime = ScriptedRuntime(
        '{"new_line": "host = a", "replaces": "host = a"}',
        '{"new_line": "host = b", "replaces": "host = a"}',
    )
    events = await collect(runtime, collect_request(after_edit_read(tmp_path)))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [c.arguments["new_string"] for c in calls] == ["    host = b"]
    assert "would not change" in runtime.bodies[1]["messages"][-1]["content"]
    assert sent_schema(runtime, 1) == local_plan.edit_schema(LINES)


async def test_the_name_a_definition_is_sought_by_is_a_word_of_the_request() -> None:
    messages = [Message("user", [TextPart("Which file declares the Orchard_2 class?")])]
    runtime = ScriptedRuntime('{"task": "find_definition", "name": "Orchard_2"}')
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, GREP])
    await collect(runtime, req)
    (branch,) = [
        b
        for b in sent_schema(runtime)["anyOf"]
        if b["properties"]["task"] == {"const": "find_definition"}
    ]
    words = ["Which", "file", "declares", "the", "Orchard_2", "class"]
    assert branch["properties"]["name"] == {"enum": words}


async def test_an_edit_left_unchanged_twice_is_not_made_and_the_answer_says_so(
    tmp_path: Path,
) -> None:
    same = '{"new_line": "host = a", "replaces": "host = a"}'
    runtime = ScriptedRuntime(same, same)
    events = await collect(runtime, collect_request(after_edit_read(tmp_path)))
    assert not [e for e in events if isinstance(e, ToolCallReady)]
    assert answer_of(events) == (
        f"I could not work out which line of app.ini to change, or how. {ground.CLOUD_HINT}"
    )


def test_a_listed_folder_named_with_a_dot_gives_plain_paths(tmp_path: Path) -> None:
    call = local_plan.to_call({"task": "list", "path": "./plans/."})
    listing = {"path": str(tmp_path / "plans"), "entries": ["roadmap.txt", "old/"]}
    messages = [
        Message("user", [TextPart("What is in plans?")]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call.id, "list_dir", json.dumps(listing))]),
    ]
    assert local_turn.current(messages, str(tmp_path)).listed() == [
        "plans/roadmap.txt",
        "plans/old/",
    ]
