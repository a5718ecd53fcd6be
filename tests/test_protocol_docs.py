"""protocol/README.md: generated from the method table, fresh, complete, and its examples are
real wire messages."""

from __future__ import annotations

import json
import re

from protocol import docs_prose
from protocol.docs import DOC_PATH, REGENERATE, UPDATE_VARIANTS, anchor, render
from protocol.lifecycle import LIFECYCLE
from protocol.methods import BY_NAME, METHODS

STALE = f"protocol/README.md is stale: run `{REGENERATE}` and commit the result"


def committed() -> str:
    return DOC_PATH.read_text(encoding="utf-8")


def json_blocks(text: str) -> list[dict]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", text, flags=re.DOTALL)]


def test_the_doc_is_fresh():
    assert committed() == render(), STALE


def test_every_method_of_the_table_is_documented():
    missing = [m.name for m in METHODS if f"### `{m.name}`" not in committed()]
    assert missing == [], f"{STALE} (missing: {missing})"
    generated = render()
    assert all(f"### `{m.name}`" in generated for m in METHODS)


def test_every_update_kind_is_documented():
    kinds = [v.model_fields["kind"].default for v in UPDATE_VARIANTS]
    missing = [k for k in kinds if f"### `{k}`" not in committed()]
    assert missing == [], f"{STALE} (missing: {missing})"


def test_examples_round_trip_through_the_models():
    requests: dict[object, str] = {}
    checked: set[str] = set()
    lifecycle = {m.name: m for m in LIFECYCLE if m.params and m.result}
    for frame in json_blocks(committed()):
        if not isinstance(frame, dict):
            continue  # e.g. the scripted model's reply list
        if frame.get("method") in lifecycle:
            model = lifecycle[frame["method"]].params
            assert model.model_validate(frame["params"]).to_wire() == frame["params"]
            requests[frame["id"]] = frame["method"]
            continue
        if frame.get("id") in requests and requests[frame["id"]] in lifecycle:
            result_model = lifecycle[requests.pop(frame["id"])].result
            assert (
                result_model
                and result_model.model_validate(frame["result"]).to_wire() == frame["result"]
            )
            checked.add("initialize")
            continue
        method = BY_NAME.get(frame.get("method", ""))
        if method is not None:
            assert method.params.model_validate(frame["params"]).to_wire() == frame["params"]
            if "id" in frame:
                requests[frame["id"]] = method.name
            checked.add(method.name)
        elif "result" in frame and frame["id"] in requests:
            result_model = BY_NAME[requests.pop(frame["id"])].result
            assert result_model.model_validate(frame["result"]).to_wire() == frame["result"]
    assert requests == {}, "every example request is followed by its response"
    assert checked == {*BY_NAME, "initialize"}


def test_links_point_at_headings():
    text = committed()
    headings = {anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links - headings == set()


def test_method_specific_errors_name_methods_of_the_table():
    assert set(docs_prose.METHOD_ERRORS) <= set(BY_NAME)
