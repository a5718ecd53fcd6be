"""The embedded local model: a small GGUF model run by llama.cpp inside the agentls process, so
agentls works with no API key and no network (`pip install 'agentls[local]'`).

Every step is decoded under a JSON schema (`local_schema`): one call of an offered tool with
valid arguments, or a final answer, whose text streams as it is generated. Guards keep a small
model on track:
- look first: when the user's request names a file or folder of the workspace, there is no
  answer until a tool call has succeeded (the answer branch is left out of the schema);
- no repeats: a call it already made since the request is not run again; the model is asked
  for its answer instead (or, while nothing has succeeded, for a call of another tool);
- after `MAX_CALLS` calls it must answer.

The model loads once per process, on the first call, off the event loop; a thinking chunk says
so while it loads. Options (`llm.providerOptions`): `temperature` (0.7), `topP`, `seed`,
`maxTokens` (per step, at most 1024), `contextWindow` (8192 tokens), `threads`, `tools` (names
of the tools to offer), `resultChars` (1500: tool output shown per result), `exampleSteps` (2:
the worked example lists a folder then reads a file; 1: reads a file), `promptCache` (true: the
state after the shared start of the prompt is kept in `<model dir>/prompt-cache/` for the next
process, see `local_cache`).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from server.providers import local_model, local_prompt, local_runtime
from server.providers import local_schema as schema
from server.providers.base import ProviderSettings
from server.providers.local_model import LocalModelError
from server.providers.local_runtime import LocalRuntime, RuntimeConfig
from server.providers.messages import (
    Finish,
    FinishReason,
    Message,
    ModelRequest,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
    Usage,
    is_turn_context,
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
        messages = self._messages(runtime, request, tools)
        calls, looked = _since_request(request.messages)
        offered = tools if len(calls) < MAX_CALLS else []
        # A request that names a file or folder of the workspace is answered from it, not from
        # what the model imagines it holds: no answer before a tool call has succeeded.
        look_first = bool(offered) and not looked and _names_workspace_path(request.messages)
        step_schema = schema.step_schema(offered, answer=not look_first)
        reply = _Reply()
        async for event in self._generate(runtime, request, messages, step_schema, reply):
            yield event
        step = _parse(reply)
        if isinstance(step, schema.ToolStep) and _repeats(step, calls):
            # Nothing useful has come back yet: another tool, not an answer from thin air.
            others = [t for t in offered if t.name != step.name] if look_first else []
            nudge = local_prompt.NUDGE_OTHER if others else local_prompt.NUDGE
            messages.append({"role": "user", "content": nudge.format(name=step.name)})
            retry = schema.step_schema(others, answer=False) if others else schema.answer_branch()
            again = _Reply(usage=reply.usage)
            async for event in self._generate(runtime, request, messages, retry, again):
                yield event
            reply, step = again, _parse(again)
        if isinstance(step, schema.ToolStep):
            call = ToolCallPart(f"local_{uuid.uuid4().hex[:12]}", step.name, step.arguments)
            yield ToolCallReady(call)
            yield Finish("tool_use", reply.usage)
            return
        yield Finish(_FINISH.get(reply.finish or "", "other"), reply.usage)

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
            shots=local_prompt.example(tools, steps=int(request.options.get("exampleSteps", 2))),
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


def _parse(reply: _Reply) -> schema.Step | None:
    """The step, or None when generation stopped before the JSON was complete."""
    try:
        return schema.parse_step(reply.answer.raw)
    except ValueError:
        return None


def _since_request(messages: list[Message]) -> tuple[list[ToolCallPart], bool]:
    """The tool calls made since the user's latest request (the turn context does not count),
    and whether any of them succeeded."""
    calls: list[ToolCallPart] = []
    succeeded = False
    for message in reversed(messages):
        if message.role == "user" and not is_turn_context(message) and message.text:
            break
        calls.extend(message.tool_calls)
        succeeded = succeeded or any(
            isinstance(p, ToolResultPart) and not p.is_error for p in message.parts
        )
    return calls, succeeded


def _names_workspace_path(messages: list[Message]) -> bool:
    """Whether the user's latest request names an existing file or folder of the workspace."""
    cwd = local_prompt.workspace(messages)
    request = next(
        (m for m in reversed(messages) if m.role == "user" and not is_turn_context(m)),
        None,
    )
    if not cwd or request is None:
        return False
    root = Path(cwd)
    for word in re.findall(r"[\w./-]{2,}", request.text):
        word = word.strip("./-")
        if word and (root / word).exists():
            return True
    return False


def _repeats(step: schema.ToolStep, calls: list[ToolCallPart]) -> bool:
    return any(c.name == step.name and c.arguments == step.arguments for c in calls)
