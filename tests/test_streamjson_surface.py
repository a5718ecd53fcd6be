"""The table of what agentls does with each `initialize` field and command-line flag
(`server.frontends.streamjson_surface`) against what the SDKs send: their own definitions and
sources (the TypeScript SDK in tests/clients, the Python SDK in the venv). A field or flag a
newer SDK sends fails here until the table decides it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import claude_agent_sdk._internal.query as py_query
import claude_agent_sdk._internal.transport.subprocess_cli as py_cli

from server.frontends.streamjson_init import APPLIED, APPLY, read_initialize
from server.frontends.streamjson_surface import CONTROL, FLAGS, INITIALIZE
from tests.node_clients import NODE_MODULES, require_clients

TS_SDK = NODE_MODULES / "@anthropic-ai" / "claude-agent-sdk"


def ts_initialize_fields() -> set[str]:
    types = (TS_SDK / "sdk.d.ts").read_text()
    block = re.search(r"declare type SDKControlInitializeRequest = \{\n(.*?)\n\};", types, re.S)
    assert block, "SDKControlInitializeRequest not found in sdk.d.ts"
    declared = set(re.findall(r"^    (\w+)\??:", block.group(1), re.M))
    sent = re.search(r'subtype:"initialize",(.*?)\}', (TS_SDK / "sdk.mjs").read_text())
    assert sent, "the initialize request not found in sdk.mjs"
    return declared | set(re.findall(r"(?:^|,)(\w+):", sent.group(1)))


def py_initialize_fields() -> set[str]:
    source = inspect.getsource(py_query.Query.initialize)
    source = source[source.index('"subtype": "initialize"') :]  # after the hook matchers
    return set(re.findall(r'"(\w+)": ', source)) | set(re.findall(r'request\["(\w+)"\]', source))


def sdk_flags() -> set[str]:
    found = set(re.findall(r'"(--[a-z][a-zA-Z0-9-]+)"', inspect.getsource(py_cli)))
    found |= set(re.findall(r'f"(--[a-z][a-zA-Z0-9-]+)[={]', inspect.getsource(py_cli)))
    found |= set(re.findall(r'"(--[a-z][a-zA-Z0-9-]+)"', (TS_SDK / "sdk.mjs").read_text()))
    return found - NOT_CLI_FLAGS


NOT_CLI_FLAGS = {"--porcelain", "--hard-fail", "--untracked-files", "--ignore-submodules"}
"""Strings in the SDK sources that are not flags of the Claude Code command (git's, node's)."""


def test_every_initialize_field_an_sdk_sends_is_decided():
    require_clients()
    sent = ts_initialize_fields() | py_initialize_fields()
    assert sent - set(INITIALIZE) == set(), "decide these in streamjson_surface.INITIALIZE"


def test_every_flag_an_sdk_passes_is_decided():
    require_clients()
    assert sdk_flags() - set(FLAGS) == set(), "decide these in streamjson_surface.FLAGS"


def test_every_honoured_field_is_applied_and_every_refused_one_told():
    for name, item in INITIALIZE.items():
        if item.status == "honoured" and name != "hooks":
            assert name in APPLY, name
    for name, item in INITIALIZE.items():
        if item.status != "refused":
            continue
        read = read_initialize({name: {"x": 1}})
        assert read.notes == [item.note] and not read.flags, name
        if name in APPLIED:
            assert read.answer == {APPLIED[name]: False}


def test_the_docs_list_every_field_and_flag_with_its_status():
    text = (Path(__file__).parents[1] / "docs" / "stream-json.md").read_text()
    for name, item in [*INITIALIZE.items(), *FLAGS.items(), *CONTROL.items()]:
        assert re.search(rf"\| `{re.escape(name)}` \| {item.status} \|", text), name


def test_every_control_request_an_sdk_defines_is_decided():
    require_clients()
    types = (TS_SDK / "sdk.d.ts").read_text()
    union = re.search(r"declare type SDKControlRequestInner = ([^;]+);", types)
    assert union, "SDKControlRequestInner not found in sdk.d.ts"
    subtypes = set()
    for name in re.findall(r"\w+", union.group(1)):
        body = re.search(rf"declare type {name} = \{{\s*subtype: '(\w+)'", types)
        assert body, name
        subtypes.add(body.group(1))
    assert subtypes ^ set(CONTROL) == set(), "decide these in streamjson_surface.CONTROL"
