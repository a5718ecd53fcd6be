"""The embedded local model: a small GGUF model run by llama.cpp inside the agentls process, so
agentls works with no API key and no network (`pip install 'agentls[local]'`).

Every step is decoded under a JSON schema. The project owns the protocol where a 1.5B model is
weak (`local_plan`): the model picks a kind of task (list a folder, find a definition, find a
text, read, edit, write, run) and fills in a path, a name or a text, and the project makes the
tool call; after an edit's read it picks one of the file's lines to replace, or a line to add.
Results come back as short plain lines with their counts (`local_results`). Guards:
- look first: a request about the project (it names a file or folder of the workspace, a code
  name, or speaks of files) gets no answer until a call has succeeded;
- no repeats: a call it already made since the request is not run again; the model is asked
  for its answer instead (or, while nothing has succeeded, for another kind of task);
- read before answering: a question about what a file says, when the turn has only listed
  folders, must read one of the files listed first; a name a listing showed is read in its
  folder, and a read of a folder lists it;
- an edit step that leaves its line as it was is asked again;
- after `MAX_CALLS` calls it must answer;
- grounded answers (`local_ground`): an answer that follows calls is checked before it is
  shown: the file names, quoted text and numbers it states must be in this turn's results (a
  count stated or countable in them, a line number shown), and text found only in the worked
  examples is refused. One retry; then the user is told what was
  found and that a cloud model does better. An answer with no call before it (a general
  question) streams as it is generated.

The model loads once per process, on the first call, off the event loop; a thinking chunk says
so while it loads. Options (`llm.providerOptions`): `temperature` (0.7), `topP`, `seed`,
`maxTokens` (per step, at most 1024), `contextWindow` (8192 tokens), `threads`, `tools` (names
of the tools to offer), `resultChars` (1500: tool output shown per result), `promptCache`
(true: the state after the shared start of the prompt is kept in `<model dir>/prompt-cache/`
for the next process, see `local_cache`).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from server.providers import local_ground as ground
from server.providers import local_model, local_plan, local_prompt, local_runtime, local_turn
from server.providers import local_schema as schema
from server.providers.base import ProviderSettings
from server.providers.local_model import LocalModelError
from server.providers.local_runtime import LocalRuntime, RuntimeConfig
from server.providers.local_schema import answer_branch
from server.providers.messages import (
    Finish,
    FinishReason,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallPart,
    ToolCallReady,
    Usage,
)

NAME = "local"
MAX_CALLS = 8
DEFAULT_CONTEXT = 8192
MAX_STEP_TOKENS = 1024
PROMPT_CACHE_DIR = "prompt-cache"
_FINISH: dict[str, FinishReason] = {"stop": "end_turn", "length": "max_tokens"}


def create(settings: ProviderSettings) -> LocalProvider:
    return LocalProvider(settings.model or local_model.DEFAULT_MODEL)


@dataclass
class _Reply:
    """One generation as it accumulates."""

    answer: schema.AnswerStream = field(default_factory=schema.AnswerStream)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)


class LocalProvider:
    """Streams constrained steps from the in-process model; see the module docstring."""

    name = NAME

    def __init__(
        self,
        model: str,
        *,
        environ: Mapping[str, str] | None = None,
        runtime: LocalRuntime | None = None,
    ) -> None:
        self.model = model
        self._environ = environ
        self._runtime = runtime  # instead of the process's loaded model: a test double

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._runtime is not None:
            async for event in self._step(self._runtime, request):
                yield event
            return
        options = request.options
        config = self._config(options)
        if config is None or not local_runtime.loaded(config):
            yield ThinkingDelta(self._loading_note())
            started = time.monotonic()
            runtime = await self._load(options)
            yield ThinkingDelta(_ready_note(runtime, time.monotonic() - started))
        else:
            runtime = local_runtime.load(config)
        async for event in self._step(runtime, request):
            yield event

    def _loading_note(self) -> str:
        entry = local_model.known(self.model)
        folder = local_model.model_dir(self._environ)
        if entry and folder and not (folder / entry.filename).is_file():
            return f"Preparing the local model {entry.title} (first use: ~1 GB to unpack)..."
        return f"Loading the local model {entry.title if entry else self.model}..."

    def _config(self, options: dict[str, Any]) -> RuntimeConfig | None:
        """The runtime config if the model file is already known to be in place."""
        try:
            path = local_model.ready_path(self.model, environ=self._environ)
        except LocalModelError:
            return None
        return self._runtime_config(path, options) if path else None

    def _runtime_config(self, path: Path, options: dict[str, Any]) -> RuntimeConfig:
        folder = local_model.model_dir(self._environ)
        keep = options.get("promptCache", True) is not False and folder is not None
        return RuntimeConfig(
            path=path,
            context=int(options.get("contextWindow") or DEFAULT_CONTEXT),
            threads=int(options.get("threads") or local_runtime.default_threads()),
            cache_dir=folder / PROMPT_CACHE_DIR if keep and folder else None,
        )

    async def _load(self, options: dict[str, Any]) -> LocalRuntime:
        def prepare() -> LocalRuntime:
            path = local_model.ensure_model(self.model, environ=self._environ)
            return local_runtime.load(self._runtime_config(path, options))

        try:
            return await anyio.to_thread.run_sync(prepare, abandon_on_cancel=True)
        except LocalModelError as exc:
            raise ProviderError(f"{NAME}: {exc}") from exc

    async def _step(self, runtime: LocalRuntime, request: ModelRequest) -> AsyncIterator[Any]:
        tools = schema.select_tools(request.tools, request.options.get("tools"))
        turn = local_turn.current(request.messages, local_prompt.workspace(request.messages))
        messages = self._messages(runtime, request, tools)
        step = _Generation(self, runtime, request, messages, live=not turn.calls)
        done = len(turn.calls) >= MAX_CALLS or turn.missed_named_path()
        kinds = [] if done else local_plan.offered(tools)
        pending = turn.pending_edit() if kinds else None
        # A request about the project is answered from a look at it, not from what the model
        # imagines it holds: no answer before a call has succeeded. A request naming a file is
        # about that file: the first look is at it, not a search.
        look_first = (
            bool(kinds) and not turn.looked and local_turn.about_project(turn.request, turn.cwd)
        )
        if look_first and local_turn.names_a_file(turn.request, turn.cwd):
            kinds = [k for k in kinds if k.name in local_plan.PATH_KINDS] or kinds
        if pending:
            first = local_plan.edit_schema(pending[1])
        elif files := _to_read(turn, kinds):
            # A listing shows names, not what a file says: the file is read before the answer.
            look_first = True
            kinds = [k for k in kinds if k.name in ("read", "list")]
            first = local_plan.plan_schema(
                kinds, answer=False, paths={"read": files}, request=turn.request
            )
        else:
            first = local_plan.plan_schema(kinds, answer=not look_first, request=turn.request)
        async for event in step.run(first):
            yield event
        call = _call(step.value, pending, turn)
        nudge, retry = self._refusal(call, turn, kinds, tools, look_first, first)
        if nudge:
            async for event in step.again(nudge, retry):
                yield event
            call = _call(step.value, pending, turn)
        if call is not None and _unchanged(call):
            # Asked again, the model still leaves the line as it was: say so, change nothing.
            text = local_prompt.UNCHANGED.format(path=call.arguments["path"])
            yield TextDelta(f"{text} {ground.CLOUD_HINT}")
            yield Finish("end_turn", step.usage)
            return
        if call is not None:
            yield ToolCallReady(call)
            yield Finish("tool_use", step.usage)
            return
        if not step.live and isinstance(step.value.get("answer"), str):
            async for event in self._grounded(step, turn, tools):
                yield event
        yield Finish(_FINISH.get(step.finish or "", "other"), step.usage)

    def _refusal(
        self,
        call: ToolCallPart | None,
        turn: local_turn.Turn,
        kinds: list[local_plan.Kind],
        tools: list[Any],
        look_first: bool,
        first: dict[str, Any],
    ) -> tuple[str, dict[str, Any]]:
        """Why a call is not made (a repeat, an edit that changes nothing, a write over a file
        that exists, text of the worked examples) and the step to take instead; ("", {}) when
        it is made."""
        if call is None:
            return "", {}
        if turn.repeats(call):
            others = [k for k in kinds if k.name != local_plan.kind_of(call)] if look_first else []
            if others:
                retry = local_plan.plan_schema(others, answer=False, request=turn.request)
                return local_prompt.NUDGE_OTHER, retry
            return local_prompt.NUDGE, answer_branch()
        if _unchanged(call):
            return local_prompt.NUDGE_SAME, first
        if call.name == "write_file" and turn.exists(str(call.arguments.get("path", ""))):
            # A small model "appends" by writing the whole file again, from memory.
            nudge = local_prompt.NUDGE_EXISTS.format(path=call.arguments["path"])
            unwritten = [k for k in kinds if k.name != "write"]
            retry = local_plan.plan_schema(unwritten, answer=bool(turn.calls), request=turn.request)
            return nudge, retry
        phrases = ground.example_phrases(local_prompt.example(tools))
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        copied = ground.copied_example(arguments, turn.evidence(), phrases)
        if copied:
            nudge = local_prompt.NUDGE_EXAMPLE.format(text=copied)
            return nudge, answer_branch() if turn.calls else first
        return "", {}

    async def _grounded(
        self, step: _Generation, turn: local_turn.Turn, tools: list[Any]
    ) -> AsyncIterator[Any]:
        """The answer, once it states only what this turn found; one retry, then what was found
        and the advice to use a cloud model."""
        evidence = turn.evidence()
        phrases = ground.example_phrases(local_prompt.example(tools))
        problem = _problem(str(step.value["answer"]), evidence, phrases)
        if problem:
            async for event in step.again(problem, answer_branch()):
                yield event
            answer = step.value.get("answer")
            if not isinstance(answer, str) or _problem(answer, evidence, phrases):
                step.value = {"answer": ground.fallback(turn.found())}
        yield TextDelta(str(step.value["answer"]))

    def _messages(
        self, runtime: LocalRuntime, request: ModelRequest, tools: list[Any]
    ) -> list[dict[str, Any]]:
        window = runtime.config.context - _max_tokens(request.options, runtime) - 64
        budget = local_prompt.Budget(window_chars=window * 3)
        if request.options.get("resultChars"):
            budget = replace(budget, result_chars=int(request.options["resultChars"]))
        system = local_prompt.system_prompt(
            tools, instructions=request.instructions, limit=budget.window_chars // 4
        )
        return local_prompt.chat(
            system=system,
            shots=local_prompt.example(tools),
            turns=local_prompt.conversation(request.messages, budget),
            budget=budget,
        )

    async def _generate(
        self,
        runtime: LocalRuntime,
        request: ModelRequest,
        messages: list[dict[str, Any]],
        step_schema: dict[str, Any],
        reply: _Reply,
    ) -> AsyncIterator[StreamEvent]:
        body = _body(request.options, runtime, messages, step_schema)
        async for chunk in runtime.stream(body):
            _check(chunk)
            if chunk.get("usage"):
                reply.usage = reply.usage + _usage(chunk["usage"])
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content") or ""
                shown = reply.answer.feed(text) if text else ""
                if shown:
                    yield TextDelta(shown)
                reply.finish = choice.get("finish_reason") or reply.finish


def _ready_note(runtime: LocalRuntime, seconds: float) -> str:
    restored = runtime.cache.restored if runtime.cache else 0
    if restored:
        return f" ready ({seconds:.1f} s; {restored} prompt tokens from the prompt cache).\n"
    return f" ready ({seconds:.1f} s).\n"


def _body(
    options: dict[str, Any],
    runtime: LocalRuntime,
    messages: list[dict[str, Any]],
    step_schema: dict[str, Any],
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_progress": True,  # a chunk per prompt batch: a cancel is seen while reading
        "max_tokens": _max_tokens(options, runtime),
        "temperature": options.get("temperature", 0.7),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "step", "schema": step_schema},
        },
    }
    for ours, theirs in (("topP", "top_p"), ("seed", "seed")):
        if options.get(ours) is not None:
            body[theirs] = options[ours]
    return body


def _max_tokens(options: dict[str, Any], runtime: LocalRuntime) -> int:
    wanted = int(options.get("maxTokens") or MAX_STEP_TOKENS)
    return max(64, min(wanted, MAX_STEP_TOKENS, runtime.config.context // 4))


def _check(chunk: dict[str, Any]) -> None:
    """llama.cpp reports failures (a prompt over the window, a bad request) as a chunk."""
    error = chunk.get("error")
    if error is None and "code" in chunk and "choices" not in chunk:
        error = chunk
    if error is None:
        return
    message = error.get("message") if isinstance(error, dict) else str(error)
    raise ProviderError(f"{NAME}: {message or 'the model failed'}")


def _usage(usage: dict[str, Any]) -> Usage:
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    prompt = usage.get("prompt_tokens") or 0
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=usage.get("completion_tokens") or 0,
        cache_read_tokens=cached,
    )


def _parse(reply: _Reply, text: str) -> dict[str, Any]:
    """The step as JSON; an answer cut off before its end is the text it got to."""
    try:
        value = json.loads(reply.answer.raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    return {"answer": text} if text.strip() else {}


def _call(
    value: dict[str, Any], pending: tuple[str, list[str]] | None, turn: local_turn.Turn
) -> ToolCallPart | None:
    if value.get("task") in local_plan.BY_NAME:
        return turn.resolve(local_plan.to_call(value))
    if pending and ("replaces" in value or "append" in value):
        return local_plan.edit_call(pending[0], pending[1], value, request=turn.request)
    return None


def _unchanged(call: ToolCallPart) -> bool:
    """An edit whose new text is the text it replaces."""
    old, new = call.arguments.get("old_string"), call.arguments.get("new_string")
    return call.name == "edit_file" and old is not None and old == new


def _to_read(turn: local_turn.Turn, kinds: list[local_plan.Kind]) -> list[str]:
    """The files a request about a file's contents must read one of, when listings are all
    this turn has looked at; [] when it may answer."""
    if not turn.only_listed() or not local_turn.asks_contents(turn.request):
        return []
    if "read" not in {k.name for k in kinds}:
        return []
    return [path for path in turn.listed() if not path.endswith("/")]


def _problem(answer: str, evidence: ground.Evidence, phrases: set[str]) -> str | None:
    """What is wrong with an answer, said so the model can fix it; None when it is grounded."""
    copied = ground.copied_example(answer, evidence, phrases)
    if copied:
        return (
            f'"{copied}" comes from the worked example, not from this project. Answer again '
            "from the results above only."
        )
    missing = ground.unfounded(answer, evidence)
    if missing:
        return (
            f"The results above do not show {', '.join(missing)}. Answer again with only what "
            "they show, or say that you could not find it."
        )
    return None


class _Generation:
    """One step's generations: the first, and a retry after a nudge. Usage adds up; an answer
    streams as it is generated only when `live` (nothing to check it against)."""

    def __init__(
        self,
        provider: LocalProvider,
        runtime: LocalRuntime,
        request: ModelRequest,
        messages: list[dict[str, Any]],
        *,
        live: bool,
    ) -> None:
        self._provider, self._runtime, self._request = provider, runtime, request
        self._messages = messages
        self.live = live
        self.value: dict[str, Any] = {}
        self.finish: str | None = None
        self.usage = Usage()
        self._raw = ""

    async def run(self, step_schema: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        reply = _Reply(usage=self.usage)
        text = []
        generation = self._provider._generate(
            self._runtime, self._request, self._messages, step_schema, reply
        )
        async for event in generation:
            text.append(event.text if isinstance(event, TextDelta) else "")
            if self.live:
                yield event
        self.usage, self.finish, self._raw = reply.usage, reply.finish, reply.answer.raw
        self.value = _parse(reply, "".join(text))

    async def again(self, nudge: str, step_schema: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        self._messages.append({"role": "assistant", "content": self._raw})
        self._messages.append({"role": "user", "content": nudge})
        async for event in self.run(step_schema):
            yield event
