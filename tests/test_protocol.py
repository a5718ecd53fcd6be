"""The contract: one method table, a fresh schema, golden wire fixtures that round-trip."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from protocol.methods import BY_NAME, METHODS
from protocol.schema import REGENERATE, SCHEMA_PATH, render
from protocol.updates import UPDATE_KINDS, SessionUpdateKind
from server.frontends.jsonrpc_handlers import Handlers, handler_name

FIXTURES = sorted((Path(__file__).parents[1] / "protocol" / "fixtures").glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_schema_is_fresh():
    assert SCHEMA_PATH.read_text() == render(), f"stale schema: run `{REGENERATE}`"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_round_trips(path):
    fixture = load(path)
    method = BY_NAME[fixture["method"]]
    assert method.params.model_validate(fixture["params"]).to_wire() == fixture["params"]
    if method.result is None:
        assert "result" not in fixture
    else:
        assert method.result.model_validate(fixture["result"]).to_wire() == fixture["result"]


def test_every_method_and_update_kind_has_a_fixture():
    methods = {load(p)["method"] for p in FIXTURES}
    assert methods == set(BY_NAME)
    update_kinds = {
        load(p)["params"]["update"]["kind"]
        for p in FIXTURES
        if load(p)["method"] == "session/update"
    }
    variants = SessionUpdateKind.__origin__.__args__
    assert update_kinds == {v.model_fields["kind"].default for v in variants}


def test_every_client_method_has_exactly_one_handler():
    names = {handler_name(m) for m in METHODS if m.direction == "client_to_server"}
    defined = {n for n in vars(Handlers) if not n.startswith("_")}
    assert names == defined


def test_the_kind_names_are_the_update_union():
    members = typing.get_args(typing.get_args(SessionUpdateKind)[0])
    assert {m.model_fields["kind"].default for m in members} == set(UPDATE_KINDS)
