"""The session store: schema and migrations, the writer, recovery, listing and FTS search."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from protocol.methods import NewSessionParams, PromptParams, RequestPermissionResult
from protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    StepFinish,
    StreamRetry,
    ToolCall,
    ToolCallUpdate,
    TurnEnd,
    Usage,
)
from server.engines.native import NativeEngine
from server.providers import codec
from server.providers.messages import (
    Finish,
    ImagePart,
    Message,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCallPart,
    ToolCallReady,
    ToolResultPart,
)
from server.providers.messages import Usage as ModelUsage
from server.sessions import schema
from server.sessions.model import ClientCapabilities
from server.sessions.service import ServiceError, SessionService
from server.sessions.store import Store, StoreError, derive_title
from server.sessions.writer import Writer
from server.timestamps import iso

END = TurnEnd(terminal="completed", stop_reason="end_turn", usage=Usage())
RESULT = {"turnId": "t", "terminal": "completed", "stopReason": "end_turn", "usage": {}}


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "sessions.db")
    yield s
    s.close()


def turn(store, sid, tid, prompt, *updates, snapshot=None, end=True):
    store.begin_turn(sid, tid, prompt, {"prompt": [{"type": "text", "text": prompt}]})
    for seq, update in enumerate(updates, 1):
        store.record_update(sid, tid, seq, update)
    if end:
        store.record_update(sid, tid, len(updates) + 1, END)
        store.end_turn(sid, tid, {**RESULT, "turnId": tid}, snapshot)
    assert store.flush_sync()


def session(store, sid, cwd="/work/a"):
    store.create_session(sid, cwd, "native", {"provider": "scripted", "mode": "default"})


def test_an_empty_database_migrates_to_the_current_version(tmp_path):
    conn = schema.connect(tmp_path / "new.db")
    assert schema.migrate(conn) == 0
    assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "turns", "journal", "journal_fts", "transcript", "trace"} <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert schema.migrate(conn) == schema.VERSION  # idempotent


def test_a_newer_database_is_refused(tmp_path):
    conn = schema.connect(tmp_path / "future.db")
    conn.execute(f"PRAGMA user_version = {schema.VERSION + 1}")
    with pytest.raises(schema.SchemaError, match="newer"):
        schema.migrate(conn)


def test_a_database_not_matching_its_version_is_moved_aside_and_replaced(tmp_path, caplog):
    path = tmp_path / "sessions.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE trace (id INTEGER PRIMARY KEY, body TEXT)")
    old.execute("INSERT INTO trace (body) VALUES ('kept')")
    old.execute(f"PRAGMA user_version = {schema.VERSION}")
    old.commit()
    old.close()
    store = Store(path)
    try:
        session(store, "s1")
        turn(store, "s1", "t1", "hello")
        assert [t.id for t in store.turns("s1")] == ["t1"]
    finally:
        store.close()
    [aside] = [
        p
        for p in tmp_path.iterdir()
        if ".incompatible-" in p.name and not p.name.endswith(("-wal", "-shm"))
    ]
    assert sqlite3.connect(aside).execute("SELECT body FROM trace").fetchall() == [("kept",)]
    assert "does not match schema version" in caplog.text and "table sessions is missing" in (
        caplog.text
    )
    assert schema.mismatch(schema.connect(path)) is None


def test_chunks_merge_into_one_journal_entry_and_the_transcript_extends(store):
    session(store, "s1")
    first = {"mode": "plan", "history": [{"role": "user", "parts": []}], "historyStart": 0}
    turn(
        store,
        "s1",
        "t1",
        "Explain the parser",
        AgentThoughtChunk(text="Let me "),
        AgentThoughtChunk(text="think."),
        AgentMessageChunk(text="The parser "),
        AgentMessageChunk(text="is LR(1)."),
        StepFinish(step=1, finish_reason="end_turn", usage=Usage()),
        snapshot=first,
    )
    second = {"mode": "plan", "history": [{"role": "assistant", "parts": []}], "historyStart": 1}
    turn(store, "s1", "t2", "Thanks", snapshot=second)
    entries = [(e.turn_id, e.role, e.update) for e in store.journal("s1")]
    assert entries == [
        ("t1", "user", {"kind": "user_message_chunk", "text": "Explain the parser"}),
        ("t1", "thinking", {"kind": "agent_thought_chunk", "text": "Let me think."}),
        ("t1", "assistant", {"kind": "agent_message_chunk", "text": "The parser is LR(1)."}),
        ("t1", "event", END.to_wire()),
        ("t2", "user", {"kind": "user_message_chunk", "text": "Thanks"}),
        ("t2", "event", END.to_wire()),
    ]
    assert store.transcript("s1") == [
        {"role": "user", "parts": []},
        {"role": "assistant", "parts": []},
    ]
    state = {"provider": "scripted", "mode": "plan", "transcriptLength": 2}
    assert store.session("s1").state == state  # the snapshot merges into the created state
    assert store.session("s1").title == "Explain the parser"


def test_a_stream_retry_drops_what_the_failed_attempt_journaled(store):
    session(store, "s1")
    call = ToolCall(tool_call_id="c1", name="grep", title="Grep x", tool_kind="search", input={})
    turn(
        store,
        "s1",
        "t1",
        "go",
        AgentMessageChunk(text="kept"),
        StepFinish(step=1, finish_reason="tool_use", usage=Usage()),
        AgentMessageChunk(text="half an ans"),
        call,
        ToolCallUpdate(tool_call_id="c1", status="failed", error="discarded"),
        StreamRetry(attempt=1, delay=0.1, error="overloaded"),
        AgentMessageChunk(text="the answer"),
    )
    texts = [e.update.get("text") for e in store.journal("s1") if e.role == "assistant"]
    assert texts == ["kept", "the answer"]
    assert store.search("half", 5) == []


def test_a_streamed_reply_is_traced_in_rows_of_chunks_and_read_back_update_by_update(
    tmp_path,
):
    path = tmp_path / "s.db"
    store = Store(path)
    session(store, "s1")
    call = ToolCall(tool_call_id="c1", name="grep", title="Grep x", tool_kind="search", input={})
    sent = [
        AgentThoughtChunk(text="Let me "),
        AgentThoughtChunk(text="look."),
        *[AgentMessageChunk(text=f"word{i} ") for i in range(50)],
        call,
        ToolCallUpdate(tool_call_id="c1", status="completed", output="x"),
        AgentMessageChunk(text="after the call"),
        AgentMessageChunk(text="."),
        AgentThoughtChunk(text="and again"),
    ]
    store.begin_turn("s1", "t1", "go", {})
    for seq, update in enumerate(sent[:30], 1):
        store.record_update("s1", "t1", seq, update)
    assert store.flush_sync()  # a run split across two batches
    for seq, update in enumerate(sent[30:], 31):
        store.record_update("s1", "t1", seq, update)
    assert store.flush_sync()
    traced = [row for row in store.trace("s1") if row["kind"] == "update"]
    assert [(row["seq"], row["data"]) for row in traced] == [
        (seq, update.to_wire()) for seq, update in enumerate(sent, 1)
    ]
    times = [row["ts"] for row in traced]
    assert times == sorted(times)
    assert store.last_seq("s1") == len(sent), "a run's row carries its last seq"
    store.close()
    rows = sqlite3.connect(path).execute("SELECT kind, seq FROM trace ORDER BY id").fetchall()
    assert [kind for kind, _ in rows].count("update") == 2, "only the tool call's own rows"
    assert len(rows) < 10, rows
    reopened = Store(path)  # the turn was left running: closed as aborted, after the last seq
    try:
        end = reopened.journal("s1")[-1]
        assert (end.update["kind"], end.seq) == ("turn_end", len(sent) + 1)
    finally:
        reopened.close()


def test_a_secret_in_a_streamed_chunk_never_reaches_the_file(tmp_path, monkeypatch):
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    path = tmp_path / "s.db"
    store = Store(path)
    session(store, "s1")
    turn(
        store,
        "s1",
        "t1",
        "print the key",
        AgentMessageChunk(text="The key is "),
        AgentMessageChunk(text=secret),
        AgentThoughtChunk(text=f"it was {secret}"),
    )
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"The key is " in stored and secret.encode() not in stored


def test_turns_left_running_by_a_dead_server_are_aborted_at_open(tmp_path):
    path = tmp_path / "s.db"
    store = Store(path)
    session(store, "s1")
    call = ToolCall(tool_call_id="c1", name="bash", title="Run make", tool_kind="execute", input={})
    turn(store, "s1", "t1", "done", AgentMessageChunk(text="ok"))
    turn(store, "s1", "t2", "cut", AgentMessageChunk(text="partial answ"), call, end=False)
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE turns SET owner = '999999999:dead' WHERE id = 't2'")
    conn.commit()
    conn.close()

    reopened = Store(path)
    try:
        assert reopened.recovered == ["t2"]
        assert [(t.id, t.status) for t in reopened.turns("s1")] == [
            ("t1", "completed"),
            ("t2", "aborted"),
        ]
        tail = [e.update for e in reopened.journal("s1") if e.turn_id == "t2"]
        assert [u["kind"] for u in tail] == [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "turn_end",
        ]
        assert tail[-1]["terminal"] == "aborted"
        assert tail[3]["status"] == "failed"
        assert [h.snippet for h in reopened.search("partial", 5)] == ["**partial** answ"]
        assert reopened.integrity() == "ok"
    finally:
        reopened.close()


def test_a_reply_cut_mid_stream_comes_back_whole_at_open(tmp_path):
    """The journal entry of a streaming reply lags its text (it is rewritten as the text
    doubles); a turn its server never finished gets the whole streamed text from the trace."""
    path = tmp_path / "s.db"
    store = Store(path)
    session(store, "s1")
    store.begin_turn("s1", "t1", "go", {"prompt": []})
    store.record_update("s1", "t1", 1, AgentThoughtChunk(text="hmm"))
    words = [f"word{i} " for i in range(300)]
    for seq, word in enumerate(words, 2):
        store.record_update("s1", "t1", seq, AgentMessageChunk(text=word).to_wire())
        if seq % 7 == 0:
            assert store.flush_sync()  # many batches, as a reply at a model's pace makes
    store.close()
    conn = sqlite3.connect(path)
    [(lagging,)] = conn.execute("SELECT entry FROM journal WHERE open = 1 AND seq = 2")
    conn.execute("UPDATE turns SET owner = '999999999:dead' WHERE id = 't1'")
    conn.commit()
    conn.close()
    assert len(json.loads(lagging)["text"]) < len("".join(words))

    reopened = Store(path)
    try:
        assert reopened.recovered == ["t1"]
        tail = [e.update for e in reopened.journal("s1")]
        assert [u["kind"] for u in tail] == [
            "user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "turn_end"
        ]  # fmt: skip
        assert tail[1]["text"] == "hmm"
        assert tail[2]["text"] == "".join(words)
        assert [h.snippet for h in reopened.search("word299", 5)] != []
        assert tail[3]["terminal"] == "aborted"
    finally:
        reopened.close()


def test_a_long_reply_rewrites_its_journal_entry_a_logarithmic_number_of_times(tmp_path):
    path = tmp_path / "s.db"
    Store(path).close()
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    writer = Writer(conn)
    writer.apply([("session", "s1", "/w", "native", {}, 0.0)])
    writer.apply([("turn", "s1", "t1", "go", "go", "o", 0.0, 0)])
    for seq in range(1, 4001):
        writer.apply(
            [("update", "s1", "t1", seq, 0.0, {"kind": "agent_message_chunk", "text": "ab"})]
        )
    rewrites = sum(s.startswith("UPDATE journal SET entry") for s in statements)
    assert rewrites <= 13, rewrites  # 2 characters, then 4, 8, ... up to 8,000
    writer.apply([("update", "s1", "t1", 4001, 0.0, END.to_wire())])
    [(entry,)] = conn.execute("SELECT entry FROM journal WHERE seq = 1").fetchall()
    assert json.loads(entry)["text"] == "ab" * 4000
    conn.close()


def test_a_live_servers_running_turn_is_left_alone(tmp_path):
    path = tmp_path / "s.db"
    first = Store(path)
    session(first, "s1")
    turn(first, "s1", "t1", "still running", end=False)
    second = Store(path)  # same process: its owner pid is alive and not a previous one
    try:
        assert second.recovered == []
        assert [t.status for t in second.turns("s1")] == ["running"]
    finally:
        second.close()
        first.close()


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "s.db"
    stores = [Store(path) for _ in range(3)]

    def write(store, n):
        session(store, f"s{n}")
        for t in range(5):
            updates = [AgentMessageChunk(text=f"w{n} t{t} c{c} ") for c in range(40)]
            turn(store, f"s{n}", f"s{n}t{t}", f"prompt {n} {t}", *updates)

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        check = stores[0]
        records, _ = check.list_sessions(None, None, 100)
        assert len(records) == 6
        for r in records:
            assert len(check.turns(r.id)) == 5
            assert len(check.journal(r.id)) == 15
        assert len(check.trace("s0")) == 5 * (1 + 41 + 1)
        assert check.integrity() == "ok"
    finally:
        for s in stores:
            s.close()


def test_a_failing_write_costs_only_itself(store):
    session(store, "s1")
    store.begin_turn("s1", "t1", "first", {})
    store.record_update("s1", "t1", 1, AgentMessageChunk(text="kept "))
    store.begin_turn("s1", "t1", "a duplicate turn id", {})  # violates the unique turn id
    store.record_update("s1", "t1", 2, AgentMessageChunk(text="also kept"))
    store.record_update("s1", "t1", 3, END)
    store.end_turn("s1", "t1", RESULT, None)
    assert store.flush_sync()
    texts = "".join(e.update.get("text", "") for e in store.journal("s1") if e.role == "assistant")
    assert texts == "kept also kept"
    assert [t.status for t in store.turns("s1")] == ["completed"]


def test_list_pages_newest_first_per_cwd(store):
    for n in range(5):
        session(store, f"s{n}", cwd="/work/a" if n % 2 == 0 else "/work/b")
        turn(store, f"s{n}", f"t{n}", f"prompt {n}")
    session(store, "empty")  # never prompted: not listed
    store.flush_sync()
    page, cursor = store.list_sessions("/work/a", None, 2)
    assert [r.id for r in page] == ["s4", "s2"]
    page, cursor = store.list_sessions("/work/a", cursor, 2)
    assert [r.id for r in page] == ["s0"] and cursor is None
    everything, _ = store.list_sessions(None, None, 10)
    assert [r.id for r in everything] == ["s4", "s3", "s2", "s1", "s0"]
    with pytest.raises(StoreError, match="cursor"):
        store.list_sessions(None, "not a cursor", 2)


@pytest.fixture
def searchable(store):
    session(store, "s1")
    turn(
        store,
        "s1",
        "t1",
        'Why does test_login.py fail with "KeyError: user"?',
        AgentMessageChunk(text="我们的数据库很快, and the login-test depends on the clock."),
    )
    return store


@pytest.mark.parametrize(
    ("query", "snippet"),
    [
        ("login", "我们的数据库很快, and the **login**-test depends on the clock."),
        ("數據庫 OR 数据库", "我们的**数据库**很快, and the login-test depends on the clock."),
        ("数据", "我们的**数据**库很快, and the login-test depends on the clock."),
        ("login-test", "我们的数据库很快, and the **login-test** depends on the clock."),
        ("test_login.py", 'Why does **test_login.py** fail with "KeyError: user"?'),
        ('"KeyError: user', 'Why does test_login.py fail with "**KeyError: user**"?'),
        ("clo*", "我们的数据库很快, and the login-test depends on the **clock**."),
    ],
)
def test_search_handles_punctuation_cjk_and_quotes(searchable, query, snippet):
    assert snippet in [h.snippet for h in searchable.search(query, 5)]


@pytest.mark.parametrize("query", ["", "   ", '"', "NOT", "(((", "nothing-like-this"])
def test_search_returns_nothing_rather_than_failing(searchable, query):
    assert searchable.search(query, 5) == []


def test_titles_come_from_the_first_prompt_line():
    assert derive_title("\n  Fix   the build \nplease") == "Fix the build"
    long = "word " * 40
    assert derive_title(long).endswith("…") and len(derive_title(long)) <= 80
    assert iso(0.25) == "1970-01-01T00:00:00.250Z"


# -- the session service over a store ----------------------------------------------------------


class Channel:
    capabilities = ClientCapabilities(permissions=True)

    def __init__(self):
        self.updates = []

    def send_update(self, params):
        self.updates.append(params.to_wire())

    async def request_permission(self, params):
        return RequestPermissionResult.model_validate(
            {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
        )


class SigningModel:
    """Thinks with a signature, writes a file, then answers."""

    name = "signing"

    def __init__(self):
        self.calls = 0

    async def stream(self, request):
        self.calls += 1
        if self.calls == 1:
            yield ThinkingDelta("hmm", signature="sig_kept")
            yield ToolCallReady(ToolCallPart("c1", "write_file", {"path": "a.txt", "content": "1"}))
            yield Finish("tool_use", ModelUsage(1, 1))
        else:
            yield TextDelta("wrote it")
            yield Finish("end_turn", ModelUsage(1, 1))


async def test_closed_sessions_come_back_with_history_rules_and_mode(tmp_path):
    store_path = tmp_path / "sessions.db"
    flags = {"llm": {"provider": "scripted"}}
    engine = NativeEngine(provider_factory=lambda _s: SigningModel())
    service = SessionService({"native": engine}, Channel(), flags=flags, store=Store(store_path))
    info = await service.new_session(NewSessionParams(cwd=str(tmp_path)))
    sid = info.session_id
    prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "write a.txt"}]}
    assert (await service.prompt(PromptParams.model_validate(prompt))).terminal == "completed"
    history = service.sessions[sid].handle.history
    assert history[1].parts[0] == ThinkingPart("hmm", "sig_kept")
    service.set_mode(sid, "acceptEdits")
    await service.close(sid)
    with pytest.raises(ServiceError) as busy_id:
        await service.new_session(NewSessionParams(cwd=str(tmp_path)), session_id=sid)
    await service.close_all()
    assert busy_id.value.code == -32602

    channel = Channel()
    again = SessionService(
        {"native": NativeEngine()}, channel, flags=flags, store=Store(store_path)
    )
    loaded = await again.load(sid)
    handle = again.sessions[sid].handle
    assert loaded.modes.current_mode_id == "acceptEdits"
    assert handle.history == history
    assert handle.history[1].parts[0].signature == "sig_kept"
    assert handle.permissions.allow_rules == {"write_file"}
    assert [u["update"]["kind"] for u in channel.updates] == [
        "user_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "checkpoint",  # the write can be undone
        "tool_call_update",
        "agent_message_chunk",
        "turn_end",
    ]
    with pytest.raises(ServiceError) as unknown:
        await again.load("sess_nope")
    await again.close_all()
    assert unknown.value.code == -31001


def test_snapshots_round_trip_through_json():
    history = [
        Message("user", [TextPart("hi"), ImagePart("data:image/png;base64,AAAA")]),
        Message("assistant", [ThinkingPart("why", "sig"), ToolCallPart("c1", "grep", {"p": 1})]),
        Message("tool", [ToolResultPart("c1", "grep", "none", is_error=True)]),
    ]
    dicts = json.loads(json.dumps([codec.message_to_dict(m) for m in history]))
    assert [codec.message_from_dict(d) for d in dicts] == history


def test_a_model_calls_stream_round_trips_with_its_text_deltas_in_one_list():
    events = [
        ThinkingDelta("hm"),
        ThinkingDelta("", "sig"),
        TextDelta("Looking "),
        TextDelta("now."),
        ToolCallReady(ToolCallPart("c1", "grep", {"pattern": "x"})),
        TextDelta("Done"),
        Finish("tool_use", ModelUsage(3, 4)),
    ]
    stored: list[dict] = []
    for event in events:
        codec.add_event(stored, event)
    assert [d["kind"] for d in stored] == [
        "thinking_delta",
        "thinking_delta",
        "text_deltas",
        "tool_call",
        "text_deltas",
        "finish",
    ]
    assert stored[2]["texts"] == ["Looking ", "now."]
    assert codec.events_from_dicts(json.loads(json.dumps(stored))) == events
    one_each = [{"kind": "text_delta", "text": "a"}, {"kind": "text_delta", "text": "b"}]
    assert codec.events_from_dicts(one_each) == [TextDelta("a"), TextDelta("b")]
