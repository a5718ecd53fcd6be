import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import { initialState, reduce, startPrompt, HANDLED_KINDS, type Item, type PanelState } from "../../src/state";
import { fixture, goldenTranscript, updateFixtures } from "../fixtures";

function run(messages = goldenTranscript()): PanelState {
  const state = initialState();
  for (const msg of messages) reduce(state, msg);
  return state;
}

function strip(items: Item[]): unknown[] {
  return items.map(({ id: _id, rev: _rev, ...rest }) => rest);
}

const TURN = "turn_8a41c09d2e55";
const USAGE = { inputTokens: 250, outputTokens: 28, cacheReadTokens: 0, cacheWriteTokens: 0 };

test("the golden transcript reduces to the expected items", () => {
  const state = run();
  assert.equal(state.busy, false);
  assert.equal(state.modelId, "claude-sonnet-4-6");
  assert.equal(state.lastSeq, updateFixtures().length);
  assert.deepEqual(strip(state.items), [
    { kind: "user", turnId: TURN, text: "use pytest", images: 0 },
    // stream_retry (seq 6) discarded the thought and the announced read_file call before it
    {
      kind: "tool", turnId: TURN, toolCallId: "call_edit", name: "tool", title: "call_edit",
      toolKind: "other", input: {}, locations: [], status: "completed",
      output: '{"path": "app.py", "replacements": 1}',
      diff: { path: "/home/ada/project/app.py", oldText: "x = 1\n", newText: "x = 2\n" },
      note: undefined,
    },
    { kind: "note", turnId: TURN, text: "The model call failed (anthropic: HTTP 529: Overloaded); retry 1 in 0.75 s." },
    {
      kind: "tool", turnId: TURN, toolCallId: "call_2", name: "tool", title: "call_2",
      toolKind: "other", input: {}, locations: [], status: "denied",
      error: "The user denied this tool call.", note: undefined, permission: "reject_once",
    },
    {
      kind: "plan", turnId: TURN,
      entries: [
        { id: "1", content: "Read the failing test", status: "completed" },
        { id: "2", content: "Fix the parser", status: "in_progress" },
      ],
    },
    { kind: "text", turnId: TURN, text: "The file says " },
    { kind: "note", turnId: TURN, text: "MCP server db: failed — MCP server 'db' is not running (failed: the server closed the connection)" },
    { kind: "note", turnId: TURN, text: "Could not save this session (database or disk is full); it goes on in memory." },
    { kind: "note", turnId: TURN, text: "You answered the agent's question." },
    {
      kind: "subagent", turnId: TURN, profile: "explorer", status: "completed",
      summary: "The parser lives in src/parse.py.", outputFiles: ["src/parse.py"],
    },
    {
      kind: "tool", turnId: TURN, toolCallId: "sub_1/call_read", parentToolCallId: "sub_1",
      name: "read_file", title: "Read src/parse.py", toolKind: "read", input: { path: "src/parse.py" },
      // The fixtures never close it: the turn's end does.
      locations: [{ path: "/home/ada/project/src/parse.py" }], status: "cancelled",
    },
    { kind: "note", turnId: TURN, text: "Now in acceptEdits mode (plan approved)." },
    { kind: "note", turnId: TURN, text: "Switched to claude-sonnet-4-6 (image in prompt)." },
    { kind: "note", turnId: TURN, text: "Compacted the conversation: 150,000 → 42,000 tokens." },
    {
      kind: "note", turnId: TURN, trust: true,
      text: "This folder is not trusted, so its settings were ignored: permissions.mode (bypassPermissions); permissions.allow; tools: null; skill deploy: allowed-tools.",
    },
    { kind: "turn", turnId: TURN, terminal: "aborted", stopReason: "cancelled", usage: USAGE },
    // the turn changed files: it can be rewound
    { kind: "checkpoint", turnId: TURN, files: ["/home/dev/shop/src/cart.py", "/home/dev/shop/tests/test_cart.py"] },
  ]);
});

test("a rewind marks the turn's and the later turns' offers as undone, with a note of what changed", () => {
  const state = initialState();
  reduce(state, { type: "session", session: { ...fixture("session_new.json").result, sessionId: "s" }, cwd: "/w" });
  let seq = 1;
  for (const turnId of ["t1", "t2", "t3"]) {
    if (turnId !== "t2") reduce(state, { type: "update", params: { sessionId: "s", turnId, seq: seq++, update: { kind: "checkpoint", files: [`/w/${turnId}.py`] } } });
    reduce(state, { type: "update", params: { sessionId: "s", turnId, seq: seq++, update: { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: USAGE } } });
  }
  const offers = () => state.items.filter((i) => i.kind === "checkpoint").map((i) => [i.turnId, (i as { rewound?: boolean }).rewound === true]);
  assert.deepEqual(offers(), [["t1", false], ["t3", false]]);
  reduce(state, { type: "rewound", turnId: "t2", restored: ["/w/t3.py"], removed: [] });
  assert.deepEqual(offers(), [["t1", false], ["t3", true]]);
  assert.equal(state.items.at(-1)?.kind, "note");
  assert.equal((state.items.at(-1) as { text: string }).text, "Rewound to before this turn: 1 file restored.");
});

test("the home folder as the workspace gets a note that proposes a project folder, not a trust button", () => {
  const state = initialState();
  reduce(state, { type: "session", session: { ...fixture("session_new.json").result, sessionId: "s" }, cwd: "/home/dev" });
  const update = { kind: "workspace_trust" as const, trusted: true, cwd: "/home/dev", ignored: [] as string[], broad: true };
  reduce(state, { type: "update", params: { sessionId: "s", turnId: "t1", seq: 1, update } });
  assert.deepEqual(strip(state.items), [
    {
      kind: "note", turnId: "t1",
      text: "agentls is working in /home/dev, your home folder or a folder above it: every command asks before it runs, " +
        "and no folder rule trusts it. Open a project folder to let sandboxed commands run unasked.",
    },
  ]);
});

test("every update kind in the fixtures is one the panel handles", () => {
  const kinds = new Set(updateFixtures().map((u) => u.update.kind));
  for (const kind of kinds) assert.ok(HANDLED_KINDS.includes(kind), `the panel does not handle ${kind}`);
  assert.deepEqual([...kinds].sort(), [...HANDLED_KINDS].sort(), "a handled kind has no golden fixture");
});

test("without the retry, the thought and the announced call stay", () => {
  const state = run(goldenTranscript().filter((m) => m.type !== "update" || m.params.update.kind !== "stream_retry"));
  assert.deepEqual(state.items.slice(0, 3).map((i) => [i.kind, "toolCallId" in i ? i.toolCallId : ""]), [
    ["user", ""],
    ["thought", ""],
    ["tool", "call_read"],
  ]);
});

test("a stream retry discards only the failed model call's streamed items", () => {
  const state = initialState();
  reduce(state, { type: "session", session: { ...fixture("session_new.json").result, sessionId: "s" } });
  startPrompt(state, "go", 0);
  const p = (seq: number, update: SessionUpdateParams["update"]) =>
    reduce(state, { type: "update", params: { sessionId: "s", turnId: "t", seq, update } });
  p(1, { kind: "agent_message_chunk", text: "First step." });
  p(2, { kind: "tool_call", toolCallId: "c1", name: "read_file", title: "Read a", toolKind: "read", input: {} });
  p(3, { kind: "tool_call_update", toolCallId: "c1", status: "completed", output: "A" });
  p(4, { kind: "step_finish", step: 1, finishReason: "tool_use", usage: USAGE });
  p(5, { kind: "agent_message_chunk", text: "Half a rep" });
  p(6, { kind: "tool_call", toolCallId: "c2", name: "read_file", title: "Read b", toolKind: "read", input: {} });
  p(7, { kind: "stream_retry", attempt: 1, delay: 0.5, error: "HTTP 529" });
  p(8, { kind: "agent_message_chunk", text: "Whole reply." });
  assert.deepEqual(
    state.items.map((i) => (i.kind === "text" || i.kind === "user" || i.kind === "note" ? `${i.kind}:${i.text}` : `${i.kind}:${"toolCallId" in i ? i.toolCallId : ""}`)),
    ["user:go", "text:First step.", "tool:c1", "note:The model call failed (HTTP 529); retry 1 in 0.5 s.", "text:Whole reply."],
  );
});

test("streamed chunks coalesce; a tool call splits the text", () => {
  const base = { sessionId: "s", turnId: "t" };
  const updates: SessionUpdateParams["update"][] = [
    { kind: "agent_message_chunk", text: "Hello " },
    { kind: "agent_message_chunk", text: "world" },
    { kind: "tool_call", toolCallId: "c1", name: "bash", title: "Run ls", toolKind: "execute", input: { command: "ls" } },
    { kind: "tool_call_update", toolCallId: "c1", status: "in_progress", output: "a\n" },
    { kind: "tool_call_update", toolCallId: "c1", status: "in_progress", output: "a\nb\n" },
    { kind: "agent_message_chunk", text: "Done." },
  ];
  const state = initialState();
  reduce(state, { type: "session", session: { ...fixture("session_new.json").result, sessionId: "s" } });
  updates.forEach((update, i) => reduce(state, { type: "update", params: { ...base, seq: i + 1, update } }));
  assert.deepEqual(state.items.map((i) => i.kind), ["text", "tool", "text"]);
  assert.equal((state.items[0] as { text: string }).text, "Hello world");
  const tool = state.items[1] as Extract<Item, { kind: "tool" }>;
  assert.equal(tool.status, "in_progress");
  assert.equal(tool.output, "a\nb\n", "live output shows the latest snapshot");
});

test("duplicate seqs and other sessions' updates are ignored", () => {
  const state = run();
  const before = state.items.length;
  reduce(state, { type: "update", params: updateFixtures()[0] });
  reduce(state, { type: "update", params: { ...updateFixtures()[0], sessionId: "other", seq: 99 } });
  assert.equal(state.items.length, before);
});

test("unknown update kinds and message types are ignored", () => {
  const state = run();
  const before = JSON.stringify(state.items);
  reduce(state, { type: "update", params: { sessionId: state.session!.sessionId, turnId: "t", seq: 100, update: { kind: "future_kind" } as never } });
  reduce(state, { type: "somethingNew" } as never);
  assert.equal(JSON.stringify(state.items), before);
});

test("benign notes from ask_user_question results", () => {
  const state = initialState();
  reduce(state, { type: "session", session: { ...fixture("session_new.json").result, sessionId: "s" } });
  const p = (seq: number, update: SessionUpdateParams["update"]) =>
    reduce(state, { type: "update", params: { sessionId: "s", turnId: "t", seq, update } });
  p(1, { kind: "tool_call", toolCallId: "q1", name: "ask_user_question", title: "Ask: Which?", toolKind: "think", input: {} });
  p(2, { kind: "tool_call_update", toolCallId: "q1", status: "completed", output: '{"error": "user_not_reachable", "hint": "..."}' });
  p(3, { kind: "tool_call", toolCallId: "q2", name: "ask_user_question", title: "Ask: Which?", toolKind: "think", input: {} });
  p(4, { kind: "tool_call_update", toolCallId: "q2", status: "completed", output: '{"error": "user_timeout", "hint": "..."}' });
  p(5, { kind: "question", questions: [], outcome: null });
  p(6, { kind: "question", questions: [], outcome: "user_timeout" });
  const [q1, q2, note] = state.items as [Extract<Item, { kind: "tool" }>, Extract<Item, { kind: "tool" }>, Extract<Item, { kind: "note" }>];
  assert.match(q1.note!, /Nobody could answer/);
  assert.match(q2.note!, /No answer in time/);
  assert.match(note.text, /No answer in time/);
  assert.equal(state.items.length, 3);
});

test("a prompt makes the panel busy until its result; errors end it too", () => {
  const state = run();
  startPrompt(state, "hi", 1);
  assert.equal(state.busy, true);
  assert.deepEqual(strip([state.items.at(-1)!]), [{ kind: "user", text: "hi", images: 1 }]);
  reduce(state, { type: "promptResult", result: { ...fixture("session_prompt_failed.json").result, turnId: "turn_2" } });
  assert.equal(state.busy, false);
  assert.deepEqual(strip(state.items.slice(-2)), [
    { kind: "error", turnId: "turn_2", text: "openai: HTTP 500: the model fell over" },
    { kind: "turn", turnId: "turn_2", terminal: "failed", stopReason: "error", usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } },
  ]);
  startPrompt(state, "again", 0);
  reduce(state, { type: "promptError", message: "session busy" });
  assert.equal(state.busy, false);
});

test("a turn the server starts for background reports runs like one of ours", () => {
  const state = run();
  const seq = state.lastSeq;
  const params = (n: number, update: SessionUpdateParams["update"]): SessionUpdateParams => ({
    sessionId: "sess_5f1c2a9e0b7d4c33", turnId: "turn_report", seq: seq + n, update,
  });
  reduce(state, { type: "update", params: params(1, { kind: "user_message_chunk", text: "Background subagents finished:\n- call_bg …", origin: "report" }) });
  assert.equal(state.busy, true);
  reduce(state, { type: "update", params: params(2, { kind: "agent_message_chunk", text: "3 files." }) });
  assert.deepEqual(strip(state.items.slice(-2)), [
    { kind: "note", turnId: "turn_report", text: "Background subagents reported back; the agent goes on with their reports." },
    { kind: "text", turnId: "turn_report", text: "3 files." },
  ]);
  reduce(state, { type: "update", params: params(3, { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: USAGE }) });
  assert.equal(state.busy, false);
});

test("a new session clears the transcript; the server going away ends busy", () => {
  const state = run();
  startPrompt(state, "hi", 0);
  reduce(state, { type: "server", state: "restarting", message: "agentls stopped; restarting" });
  assert.equal(state.busy, false);
  reduce(state, { type: "session", session: fixture("session_new.json").result });
  assert.deepEqual(state.items, []);
  assert.equal(state.lastSeq, 0);
});

test("session list: results and unavailability", () => {
  const state = run();
  reduce(state, { type: "sessions", sessions: [], unavailable: "Session history is not available from this server yet." });
  assert.equal(state.sessions.unavailable, "Session history is not available from this server yet.");
  reduce(state, { type: "sessions", sessions: [{ sessionId: "s1", title: "Fix parser" }], query: "parser" });
  assert.deepEqual(state.sessions.list, [{ sessionId: "s1", title: "Fix parser" }]);
  assert.equal(state.sessions.unavailable, undefined);
  assert.equal(state.sessions.query, "parser");
});

test("every tool card still open when its turn ends is closed with it", () => {
  const state = run();
  const seq = state.lastSeq;
  const params = (n: number, update: SessionUpdateParams["update"]): SessionUpdateParams => ({
    sessionId: "sess_5f1c2a9e0b7d4c33", turnId: "turn_cut", seq: seq + n, update,
  });
  const call = (id: string) => ({ kind: "tool_call" as const, toolCallId: id, name: "bash", title: `bash ${id}`, toolKind: "execute" as const, input: { command: "sleep 60" } });
  startPrompt(state, "run them", 0);
  reduce(state, { type: "update", params: params(1, call("call_running")) });
  reduce(state, { type: "update", params: params(2, { kind: "tool_call_update", toolCallId: "call_running", status: "in_progress" }) });
  reduce(state, { type: "update", params: params(3, call("call_waiting")) });
  reduce(state, { type: "update", params: params(4, call("call_done")) });
  reduce(state, { type: "update", params: params(5, { kind: "tool_call_update", toolCallId: "call_done", status: "completed", output: "ok" }) });
  reduce(state, { type: "update", params: params(6, { kind: "turn_end", terminal: "aborted", stopReason: "cancelled", usage: USAGE }) });
  const tools = state.items.filter((i) => i.kind === "tool" && i.turnId === "turn_cut");
  assert.deepEqual(
    tools.map((t) => t.kind === "tool" && [t.toolCallId, t.status, t.error]),
    [
      ["call_running", "cancelled", undefined],
      ["call_waiting", "cancelled", undefined],
      ["call_done", "completed", undefined],
    ],
  );
  // The same when only the prompt's result tells the turn ended.
  startPrompt(state, "again", 0);
  reduce(state, { type: "update", params: { ...params(7, call("call_late")), turnId: "turn_2" } });
  reduce(state, { type: "promptResult", result: { ...fixture("session_prompt_failed.json").result, turnId: "turn_2" } });
  const late = state.items.find((i) => i.kind === "tool" && i.toolCallId === "call_late");
  assert.deepEqual(late && late.kind === "tool" && [late.status, late.error], ["failed", "The turn ended before this tool call finished."]);
});

test("a mode switch from the host updates the session's mode", () => {
  const state = run();
  reduce(state, { type: "mode", modeId: "plan" });
  assert.equal(state.session?.modes.currentModeId, "plan");
});
