"""Generate the protocol's JSON Schema from the method table.

python -m protocol.schema           # rewrite protocol/schema/agentls.schema.json
python -m protocol.schema --check   # exit 1 when the committed file is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic.json_schema import models_json_schema

from protocol.base import WireModel
from protocol.errors import ERROR_CODES, ERROR_NAMES
from protocol.field_docs import describe
from protocol.lifecycle import LIFECYCLE
from protocol.methods import METHODS, PROTOCOL_VERSION

SCHEMA_PATH = Path(__file__).parent / "schema" / "agentls.schema.json"
REGENERATE = "python -m protocol.schema"
NULL = {"type": "null"}


def build_schema() -> dict:
    models = {m.params for m in METHODS} | {m.result for m in METHODS if m.result}
    models |= {m.params for m in LIFECYCLE if m.params} | {m.result for m in LIFECYCLE if m.result}
    ordered = sorted(models, key=lambda m: m.__name__)
    refs, schema = models_json_schema(
        [(m, "validation") for m in ordered],
        by_alias=True,
        ref_template="#/$defs/{model}",
    )

    def ref(model):
        return refs[(model, "validation")]

    methods = {}
    for m in METHODS:
        entry = {"direction": m.direction, "description": m.doc, "params": ref(m.params)}
        if m.result is None:
            entry["notification"] = True
        else:
            entry["result"] = ref(m.result)
        methods[m.name] = entry
    for lm in LIFECYCLE:
        entry = {"direction": "client_to_server", "description": lm.doc, "lifecycle": True}
        entry["params"] = ref(lm.params) if lm.params else NULL
        if lm.notification:
            entry["notification"] = True
        else:
            entry["result"] = ref(lm.result) if lm.result else NULL
        methods[lm.name] = entry
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agentls JSON-RPC protocol",
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "errors": {str(code): text for code, text in ERROR_CODES.items()},
        "errorNames": {str(code): name for code, name in ERROR_NAMES.items()},
        "$defs": describe(schema, wire_models())["$defs"],
    }


def wire_models() -> dict[str, type[WireModel]]:
    found: dict[str, type[WireModel]] = {}
    todo = [WireModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.setdefault(sub.__name__, sub)
            todo.append(sub)
    return found


def render() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = SCHEMA_PATH.read_text() if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is stale; run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.write_text(text)
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
