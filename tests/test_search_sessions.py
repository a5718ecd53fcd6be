"""The search_sessions tool: offered only with a store, FTS with a phrase fallback, and used by
the model in a later session."""

from __future__ import annotations

import json

import pytest

from protocol.methods import NewSessionParams, PromptParams
from protocol.updates import AgentMessageChunk, TurnEnd, Usage
from server.engines.native import NativeEngine
from server.providers.scripted import ScriptedProvider, ScriptedReply
from server.sessions.model import ClientCapabilities
from server.sessions.service import SessionService
from server.sessions.store import Store
from server.tools.base import ToolContext
from server.tools.registry import builtin_tools
from server.tools.sessions import SearchSessions, SearchSessionsInput


class Recorder:
    capabilities = ClientCapabilities()

    def __init__(self):
        self.updates = []

    def send_update(self, params):
        self.updates.append(params.to_wire())


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "sessions.db")
    s.create_session("s_old", str(tmp_path), "native", {})
    s.begin_turn("s_old", "t_old", "Why is the cache (LRU) evicting too early?", {})
    s.record_update("s_old", "t_old", 1, AgentMessageChunk(text="The TTL is 5s; raise it."))
    end = TurnEnd(terminal="completed", stop_reason="end_turn", usage=Usage())
    s.record_update("s_old", "t_old", 2, end)
    s.end_turn("s_old", "t_old", {"terminal": "completed", "stopReason": "end_turn"}, None)
    yield s
    s.close()


def names(tools):
    return {t.name for t in tools}


def test_offered_only_when_sessions_are_stored(store):
    assert "search_sessions" not in names(builtin_tools())
    assert "search_sessions" in names(builtin_tools(search=store))
    tool = SearchSessions(store)
    assert tool.read_only and tool.kind == "search"


@pytest.mark.parametrize(
    ("query", "snippets"),
    [
        ("TTL", ["The **TTL** is 5s; raise it."]),
        ("cache (LRU", ["Why is the **cache (LRU**) evicting too early?"]),
        ("", []),
        ('"', []),
    ],
)
async def test_the_tool_searches_with_a_phrase_fallback(tmp_path, store, query, snippets):
    result = await SearchSessions(store).run(
        ToolContext(cwd=tmp_path), SearchSessionsInput(query=query)
    )
    assert [h["snippet"] for h in result["hits"]] == snippets
    for hit in result["hits"]:
        assert hit["sessionId"] == "s_old"
        assert hit["title"] == "Why is the cache (LRU) evicting too early?"


async def test_a_later_session_finds_an_earlier_one(tmp_path, store):
    requests = []

    def model(request):
        requests.append(request)
        if len(requests) == 1:
            return ScriptedReply(tool_calls=[("search_sessions", {"query": "evicting"})])
        return ScriptedReply(text="found it")

    engine = NativeEngine(provider_factory=lambda _s: ScriptedProvider(model))
    service = SessionService(
        {"native": engine}, Recorder(), flags={"llm": {"provider": "scripted"}}, store=store
    )
    info = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    prompt = {"sessionId": info.session_id, "prompt": [{"type": "text", "text": "recall"}]}
    result = await service.prompt(PromptParams.model_validate(prompt))
    await service.close_all()
    assert result.terminal == "completed"
    assert "search_sessions" in {t.name for t in requests[0].tools}
    tool_result = requests[1].messages[-2].parts[0]
    hits = json.loads(tool_result.content)["hits"]
    assert [(h["sessionId"], h["role"]) for h in hits] == [("s_old", "user")]


async def test_other_workspaces_sessions_stay_out_unless_the_user_approves(tmp_path, store):
    """Issue 19, item 12: a prompt injected in one repository must not pull another project's
    conversations into the model."""
    requests = []

    def model(request):
        requests.append(request)
        if len(requests) == 1:
            return ScriptedReply(tool_calls=[("search_sessions", {"query": "evicting"})])
        if len(requests) == 2:
            args = {"query": "evicting", "allWorkspaces": True}
            return ScriptedReply(tool_calls=[("search_sessions", args)])
        return ScriptedReply(text="done")

    other = tmp_path / "other-repo"
    other.mkdir()
    engine = NativeEngine(provider_factory=lambda _s: ScriptedProvider(model))
    service = SessionService(
        {"native": engine}, Recorder(), flags={"llm": {"provider": "scripted"}}, store=store
    )
    info = await service.new_session(NewSessionParams(cwd=str(other)))
    prompt = {"sessionId": info.session_id, "prompt": [{"type": "text", "text": "recall"}]}
    result = await service.prompt(PromptParams.model_validate(prompt))
    await service.close_all()
    assert result.terminal == "completed"
    scoped = requests[1].messages[-2].parts[0]
    assert json.loads(scoped.content) == {"hits": []}
    everywhere = requests[2].messages[-2].parts[0]
    assert everywhere.is_error and "approval" in everywhere.content
    assert "TTL" not in everywhere.content
