"""The shape every reply of the local model is constrained to, and how to read it back.

A small model does not produce usable tool calls on its own, so each step is decoded under a
JSON schema with one branch per offered tool (its name and its argument schema) and one branch
for the final answer:

    {"name": "read_file", "arguments": {"path": "README.md"}}
    {"answer": "The first line is ..."}

`AnswerStream` decodes the answer's JSON string while it is being generated, so the answer
streams to the user token by token.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from server.providers.messages import ToolSpec

# The tools a small model handles well, in the order it is shown them. Others are offered only
# while the list stays short: every tool costs prompt tokens (read at ~75 tokens/s on two
# cores) and dilutes the choice.
PREFERRED_TOOLS = ("read_file", "list_dir", "grep", "edit_file", "write_file", "bash")
MAX_TOOLS = 6
_DESCRIPTION_CHARS = 80
_DROPPED_KEYS = {"title", "description", "default", "examples", "$defs", "definitions"}
_MAX_REF_DEPTH = 4


@dataclass(frozen=True)
class ToolStep:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class AnswerStep:
    text: str


Step = ToolStep | AnswerStep


def select_tools(tools: list[ToolSpec], names: list[str] | None = None) -> list[ToolSpec]:
    """The tools named (option `tools`), else the preferred ones present, then others, up to
    `MAX_TOOLS`."""
    by_name = {t.name: t for t in tools}
    if names:
        return [by_name[n] for n in names if n in by_name]
    chosen = [by_name[n] for n in PREFERRED_TOOLS if n in by_name]
    chosen += [t for t in tools if t.name not in PREFERRED_TOOLS]
    return chosen[:MAX_TOOLS]


def argument_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema reduced to what decoding needs: references inlined, no prose,
    and no optional flags (a small model sets them at random; their defaults are right)."""
    schema = _inline(parameters, parameters, 0)
    if schema.get("type") != "object":
        return {"type": "object"}
    required = set(schema.get("required", []))
    properties = {
        name: prop
        for name, prop in schema.get("properties", {}).items()
        if name in required or not _is_flag(prop)
    }
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = [n for n in properties if n in required]
    out["additionalProperties"] = False
    return out


def _is_flag(prop: dict[str, Any]) -> bool:
    return prop.get("type") == "boolean"


def _inline(node: Any, root: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(v, root, depth) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _resolve(ref, root)
        if target is None or depth >= _MAX_REF_DEPTH:
            return {}
        return _inline(target, root, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):  # names here are not keywords
            out[key] = {name: _inline(sub, root, depth) for name, sub in value.items()}
        else:
            out[key] = _inline(value, root, depth)
    return out


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    match = re.fullmatch(r"#/(\$defs|definitions)/(.+)", ref)
    if not match:
        return None
    target = root.get(match.group(1), {}).get(match.group(2))
    return target if isinstance(target, dict) else None


def answer_branch() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"answer": {"type": "string", "minLength": 1}},
        "required": ["answer"],
        "additionalProperties": False,
    }


def tool_branch(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"const": tool.name},
            "arguments": argument_schema(tool.parameters),
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def step_schema(tools: list[ToolSpec], *, answer: bool = True) -> dict[str, Any]:
    """One call of one of `tools` with valid arguments, or (when `answer`) a final answer."""
    branches = [tool_branch(t) for t in tools]
    if answer or not branches:
        branches.append(answer_branch())
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def describe_tools(tools: list[ToolSpec]) -> str:
    """The tools as the model's own chat format lists them: one JSON line per function, with a
    one-sentence description and bare parameter types (the decoder enforces the details)."""
    return "\n".join(json.dumps(_function(t), ensure_ascii=False) for t in tools)


def _function(tool: ToolSpec) -> dict[str, Any]:
    schema = argument_schema(tool.parameters)
    properties = {name: {"type": _type_name(p)} for name, p in schema["properties"].items()}
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        parameters["required"] = schema["required"]
    description = _first_sentence(tool.description)
    return {
        "type": "function",
        "function": {"name": tool.name, "description": description, "parameters": parameters},
    }


def _type_name(prop: dict[str, Any]) -> str:
    kinds = [p.get("type") for p in prop.get("anyOf", [])] or [prop.get("type")]
    names = [k for k in kinds if isinstance(k, str) and k != "null"]
    return names[0] if names else "string"


def _first_sentence(text: str) -> str:
    line = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", line)
    sentence = match.group(1) if match else line
    if len(sentence) <= _DESCRIPTION_CHARS:
        return sentence
    return sentence[:_DESCRIPTION_CHARS].rsplit(" ", 1)[0] + "..."


def parse_step(text: str) -> Step:
    """Read a constrained reply; `ValueError` when it is not one (e.g. cut off)."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("a step is a JSON object")
    if isinstance(value.get("answer"), str):
        return AnswerStep(value["answer"])
    name, arguments = value.get("name"), value.get("arguments", {})
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise ValueError("a step is a tool call or an answer")
    return ToolStep(name, arguments)


def step_text(step: Step) -> str:
    """How a step is written back into the conversation the model sees."""
    if isinstance(step, AnswerStep):
        return json.dumps({"answer": step.text}, ensure_ascii=False)
    return json.dumps({"name": step.name, "arguments": step.arguments}, ensure_ascii=False)


_ANSWER_START = re.compile(r'\s*\{\s*"answer"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class AnswerStream:
    """Feeds on the raw reply as it is generated; returns the newly decoded answer text, if the
    reply is an answer. A tool call yields nothing."""

    def __init__(self) -> None:
        self.raw = ""
        self._pos: int | None = None  # where the answer string's undecoded rest begins
        self._done = False

    def feed(self, piece: str) -> str:
        self.raw += piece
        if self._done:
            return ""
        if self._pos is None:
            match = _ANSWER_START.match(self.raw)
            if not match:
                return ""
            self._pos = match.end()
        out, self._pos, self._done = _decode(self.raw, self._pos)
        return out


def _decode(raw: str, pos: int) -> tuple[str, int, bool]:
    """Decode a JSON string body from `pos` as far as it is complete."""
    out: list[str] = []
    while pos < len(raw):
        char = raw[pos]
        if char == '"':
            return "".join(out), pos + 1, True
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        if pos + 1 >= len(raw):
            break
        code = raw[pos + 1]
        if code != "u":
            out.append(_ESCAPES.get(code, code))
            pos += 2
            continue
        decoded, used = _unicode_escape(raw, pos)
        if used == 0:
            break
        out.append(decoded)
        pos += used
    return "".join(out), pos, False


def _unicode_escape(raw: str, pos: int) -> tuple[str, int]:
    """`\\uXXXX`, or a surrogate pair of two; (text, chars used), used 0 when incomplete."""
    if len(raw) < pos + 6:
        return "", 0
    high = int(raw[pos + 2 : pos + 6], 16)
    if 0xD800 <= high < 0xDC00:
        if len(raw) < pos + 12:
            return "", 0
        if raw[pos + 6 : pos + 8] == "\\u":
            low = int(raw[pos + 8 : pos + 12], 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)), 12
    return chr(high), 6
