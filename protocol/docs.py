"""Generate protocol/README.md, the protocol for people, from the method table.

    python -m protocol.docs           # rewrite protocol/README.md
    python -m protocol.docs --check   # exit 1 when the committed file is stale

Methods, fields and their descriptions come from `METHODS` and the wire models' docstrings,
examples from `protocol/fixtures/`, the prose from `protocol/docs_prose.py`.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from protocol import docs_prose as prose
from protocol.client._errors import ERROR_CLASSES
from protocol.content import ContentBlock
from protocol.errors import ERROR_CODES, INVALID_PARAMS, SESSION_NOT_FOUND
from protocol.field_docs import field_docs
from protocol.methods import METHODS, PROTOCOL_VERSION, Method
from protocol.updates import SessionUpdateKind

DOC_PATH = Path(__file__).parent / "README.md"
FIXTURES = Path(__file__).parent / "fixtures"
REGENERATE = "python -m protocol.docs"

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}
UPDATE_VARIANTS: tuple[type[BaseModel], ...] = get_args(get_args(SessionUpdateKind)[0])
CONTENT_VARIANTS: tuple[type[BaseModel], ...] = get_args(get_args(ContentBlock)[0])
UNIONS = {"SessionUpdate": UPDATE_VARIANTS, "ContentBlock": CONTENT_VARIANTS}
OWN_SECTION = {"SessionUpdate": "session-updates"}
"""Unions documented in a section of their own rather than under Types."""


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def doc_of(cls: type) -> str:
    return inspect.cleandoc(cls.__doc__) if cls.__doc__ else ""


def is_tag(tp: Any, default: Any) -> bool:
    """A one-value literal with that value as default: the tag of a union variant."""
    return get_origin(tp) is Literal and get_args(tp) == (default,)


def carries_updates(method: Method) -> bool:
    return "update" in method.params.model_fields


def tag_of(model: type[BaseModel]) -> str:
    return next(n for n, f in model.model_fields.items() if is_tag(f.annotation, f.default))


def requirement(field: FieldInfo) -> str:
    if field.is_required() or is_tag(field.annotation, field.default):
        return "yes"
    if field.default is None or field.default_factory is not None:
        return "no"
    return f"no (default `{json.dumps(field.default)}`)"


def load_fixtures() -> list[tuple[str, dict[str, Any]]]:
    paths = sorted(FIXTURES.glob("*.json"))
    return [(p.name, json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def code_block(message: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(message, indent=2, ensure_ascii=False) + "\n```"


def frames(method: Method, fixture: dict[str, Any]) -> list[dict[str, Any]]:
    """A fixture as the JSON-RPC messages that carry it."""
    head: dict[str, Any] = {"jsonrpc": "2.0"}
    if method.is_notification:
        return [head | {"method": method.name, "params": fixture["params"]}]
    head["id"] = 1 if method.direction == "client_to_server" else "agentls-1"
    request = head | {"method": method.name, "params": fixture["params"]}
    return [request, head | {"result": fixture["result"]}]


class Renderer:
    """Renders sections, collecting the nested models they mention for the Types section."""

    def __init__(self) -> None:
        self.fixtures = load_fixtures()
        self.types: dict[str, Any] = {}
        """Name -> model, or -> variants for a union."""

    def type_text(self, tp: Any) -> str:
        origin = get_origin(tp)
        if origin is Annotated:
            return self.type_text(get_args(tp)[0])
        if origin in (Union, types.UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            for name, variants in UNIONS.items():
                if frozenset(members) == frozenset(variants):
                    if name not in OWN_SECTION:
                        self.types.setdefault(name, variants)
                    return f"[{name}](#{OWN_SECTION.get(name, anchor(name))})"
            return " | ".join(self.type_text(a) for a in members)
        if origin is Literal:
            return " | ".join(f"`{json.dumps(v)}`" for v in get_args(tp))
        if origin is list:
            inner = self.type_text(get_args(tp)[0])
            return f"({inner})[]" if " | " in inner else f"{inner}[]"
        if origin is dict:
            value = get_args(tp)[1]
            return "object" if value is Any else f"map of {self.type_text(value)}"
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            self.types.setdefault(tp.__name__, tp)
            return f"[{tp.__name__}](#{anchor(tp.__name__)})"
        return SCALARS.get(tp, getattr(tp, "__name__", str(tp)))

    def field_table(self, model: type[BaseModel]) -> str:
        if not model.model_fields:
            return "none (`{}`)"
        rows = ["| field | type | required | description |", "|---|---|---|---|"]
        docs = field_docs(model)
        for name, field in model.model_fields.items():
            kind = self.type_text(field.annotation).replace("|", "\\|")
            cells = [
                f"`{field.alias or name}`",
                kind,
                requirement(field),
                one_line(field.description or docs.get(name)),
            ]
            rows.append("| " + " | ".join(cells) + " |")
        return "\n".join(rows)

    def examples(self, method: Method, *, kind: str | None = None) -> list[str]:
        """The fixtures of `method` (of one update `kind`) as example messages."""
        out = []
        for name, fixture in self.fixtures:
            if fixture.get("method") != method.name:
                continue
            if kind is None or fixture["params"]["update"]["kind"] == kind:
                out.append(f"Example (`fixtures/{name}`):")
                out += [code_block(frame) for frame in frames(method, fixture)]
        return out

    # -- sections ------------------------------------------------------------------------------

    def method(self, method: Method) -> str:
        direction = (
            "client → server" if method.direction == "client_to_server" else "server → client"
        )
        kind = "notification" if method.is_notification else "request"
        parts = [f"### `{method.name}`", f"*{direction} {kind}*", one_line(method.doc)]
        parts.append(f"**Params** (`{method.params.__name__}`):" + self._inline(method.params))
        if method.result is None:
            parts.append("**Result**: none (a notification gets no response).")
        else:
            parts.append(f"**Result** (`{method.result.__name__}`):" + self._inline(method.result))
        parts.append(self.errors_line(method))
        if carries_updates(method):
            parts.append("Examples: one per kind, under [Session updates](#session-updates).")
        else:
            parts += self.examples(method)
        return "\n\n".join(parts)

    def _inline(self, model: type[BaseModel]) -> str:
        table = self.field_table(model)
        return " " + table if not table.startswith("|") else "\n\n" + table

    def errors_line(self, method: Method) -> str:
        if method.direction == "server_to_client":
            return (
                "**Errors**: the client answers; see [Answering the server](#answering-the-server)."
            )
        if method.is_notification:
            return (
                "**Errors**: none (a notification gets no response; an unknown session is ignored)."
            )
        codes = [INVALID_PARAMS]
        if "session_id" in method.params.model_fields:
            codes.append(SESSION_NOT_FOUND)
        codes += prose.METHOD_ERRORS.get(method.name, ())
        return (
            "**Errors**: " + ", ".join(f"`{c}` {ERROR_CODES[c].split(';')[0]}" for c in codes) + "."
        )

    def methods(self, direction: str) -> str:
        return "\n\n".join(self.method(m) for m in METHODS if m.direction == direction)

    def updates(self) -> str:
        update_method = next(m for m in METHODS if carries_updates(m))
        parts = [
            f"Each `{update_method.name}` notification carries one update, tagged on `kind`:",
            self.field_table(update_method.params),
        ]
        for variant in UPDATE_VARIANTS:
            kind = variant.model_fields["kind"].default
            parts += [f"### `{kind}`", doc_of(variant), self.field_table(variant)]
            parts += self.examples(update_method, kind=kind)
        return "\n\n".join(p for p in parts if p)

    def type_sections(self) -> str:
        done: set[str] = set()
        while pending := [n for n in self.types if n not in done]:
            for name in pending:  # rendering a type finds the types it mentions
                done.add(name)
                self.type_section(name, self.types[name])
        return "\n\n".join(self.type_section(n, self.types[n]) for n in sorted(self.types))

    def type_section(self, name: str, model: Any) -> str:
        if isinstance(model, tuple):
            links = " | ".join(self.type_text(v) for v in model)
            return f"### {name}\n\nOne of {links}, tagged on `{tag_of(model[0])}`."
        body = [f"### {name}", doc_of(model), self.field_table(model)]
        return "\n\n".join(p for p in body if p)

    def errors(self) -> str:
        rows = ["| code | meaning | Python client |", "|---|---|---|"]
        for code, text in ERROR_CODES.items():
            cls = ERROR_CLASSES.get(code)
            rows.append(f"| `{code}` | {one_line(text)} | {f'`{cls.__name__}`' if cls else ''} |")
        return prose.ERRORS_INTRO + "\n\n" + "\n".join(rows)


SECTIONS = (
    "Transport",
    "Lifecycle",
    "Capabilities and versioning",
    "Turns and their guarantees",
    "Answering the server",
    "Editor context",
    "Checkpoints and rewind",
    "Client → server methods",
    "Server → client methods",
    "Session updates",
    "Types",
    "Errors",
    "Python client",
    "Scripted model",
)


def render() -> str:
    r = Renderer()
    frame = {"jsonrpc": "2.0", "id": 1, "method": "engines/list", "params": {}}
    body = json.dumps(frame, separators=(",", ":"))
    init_request, init_response = prose.initialize_example()
    sections = {
        "Transport": prose.TRANSPORT.format(length=len(body.encode()), body=body),
        "Lifecycle": prose.LIFECYCLE.format(
            initialize_request=json.dumps(init_request, indent=2),
            initialize_response=json.dumps(init_response, indent=2),
        ),
        "Capabilities and versioning": prose.CAPABILITIES.format(version=PROTOCOL_VERSION),
        "Turns and their guarantees": prose.TURNS,
        "Answering the server": prose.ANSWERING,
        "Editor context": prose.EDITOR_CONTEXT,
        "Checkpoints and rewind": prose.CHECKPOINTS,
        "Client → server methods": r.methods("client_to_server"),
        "Server → client methods": r.methods("server_to_client"),
        "Session updates": r.updates(),
    }
    sections["Types"] = r.type_sections()  # after the sections that mention the types
    sections["Errors"] = r.errors()
    sections["Python client"] = prose.PYTHON_CLIENT + "\n\n" + prose.PYTHON_CLIENT_REFERENCE
    sections["Scripted model"] = prose.SCRIPTED_MODEL
    toc = "\n".join(f"- [{name}](#{anchor(name)})" for name in SECTIONS)
    head = [
        "# The agentls protocol",
        f"<!-- generated by `{REGENERATE}`; edit protocol/docs_prose.py or the models -->",
        prose.INTRO.format(command=REGENERATE),
        toc,
    ]
    text = "\n\n".join([*head, *(f"## {name}\n\n{sections[name]}" for name in SECTIONS)])
    return text + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
        if current != text:
            print(f"{DOC_PATH} is stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    DOC_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
