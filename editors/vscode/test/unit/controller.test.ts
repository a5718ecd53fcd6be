import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ErrorCode, type Question, type SessionInfoResult } from "../../../protocol/protocol";
import type { HostToPanel } from "../../../webview/src/messages";
import { HANDLED_SERVER_METHODS, HISTORY_UNAVAILABLE, SessionController, type AgentConnection } from "../../src/controller";
import { BENIGN_NOTES } from "../../../webview/src/words";
import { askQuestions, type CancellationLike } from "../../src/ui";
import { cancellation, FakeWindow } from "./fakes";

function fixture(name: string): { params: any; result: any } {
  let dir = __dirname;
  while (!existsSync(join(dir, "protocol", "fixtures"))) dir = join(dir, "..");
  return JSON.parse(readFileSync(join(dir, "protocol", "fixtures", name), "utf8"));
}

const SESSION = { sessionId: "s1", engine: "native", model: "m1", provider: "scripted", modes: { currentModeId: "default", availableModes: [] }, models: { currentModelId: "m1", availableModels: [] } } as SessionInfoResult;

class FakeConnection implements AgentConnection {
  calls: [string, unknown][] = [];
  handlers: Record<string, (params: any) => unknown> = {};
  async request(method: string, params: unknown): Promise<any> {
    this.calls.push([method, params]);
    const handler = this.handlers[method];
    if (!handler) throw Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
    return handler(params);
  }
  notify(method: string, params: unknown): void {
    this.calls.push([method, params]);
  }
}

function setup() {
  const conn = new FakeConnection();
  const posted: HostToPanel[] = [];
  const host = { cwd: () => "/work", settings: () => ({ model: "", permissionMode: "plan" }), openFile: () => {}, openLink: () => {}, copy: () => {}, log: () => {}, trusted: () => true };
  const controller = new SessionController(conn, { post: (m) => posted.push(m) }, host);
  conn.handlers["session/new"] = () => SESSION;
  return { conn, posted, controller };
}

test("ready server → a session with the settings; ready panel → state replayed", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  assert.deepEqual(conn.calls, [["session/new", { cwd: "/work", model: undefined, mode: "plan", workspaceTrusted: true }]]);
  assert.deepEqual(posted, [{ type: "server", state: "ready", message: undefined }, { type: "session", session: SESSION, cwd: "/work" }]);
  posted.length = 0;
  await controller.handlePanel({ type: "ready" });
  assert.deepEqual(posted, [{ type: "server", state: "ready", message: undefined }, { type: "session", session: SESSION, cwd: "/work" }]);
});

test("prompt → session/prompt → promptResult; updates of this session only are forwarded", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  const result = { turnId: "t1", terminal: "completed", stopReason: "end_turn", usage: {} };
  conn.handlers["session/prompt"] = () => result;
  await controller.handlePanel({ type: "prompt", prompt: [{ type: "text", text: "hi" }, { type: "bogus" } as never] });
  assert.deepEqual(conn.calls.at(-1), ["session/prompt", { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] }]);
  assert.deepEqual(posted.at(-1), { type: "promptResult", result });
  const update = { sessionId: "s1", turnId: "t1", seq: 1, update: { kind: "agent_message_chunk" as const, text: "x" } };
  controller.onUpdate(update);
  controller.onUpdate({ ...update, sessionId: "other" });
  assert.deepEqual(posted.at(-1), { type: "update", params: update });
  assert.equal(posted.filter((m) => m.type === "update").length, 1);
});

test("cancel is a notification; a failed prompt is reported", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  await controller.handlePanel({ type: "cancel" });
  assert.deepEqual(conn.calls.at(-1), ["session/cancel", { sessionId: "s1" }]);
  conn.handlers["session/prompt"] = () => {
    throw Object.assign(new Error("session busy"), { code: ErrorCode.SessionBusy });
  };
  await controller.handlePanel({ type: "prompt", prompt: [{ type: "text", text: "hi" }] });
  assert.deepEqual(posted.at(-1), { type: "promptError", message: "session busy" });
});

test("model switch confirms, or reverts on error", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  conn.handlers["session/set_model"] = () => ({});
  await controller.handlePanel({ type: "setModel", modelId: "m2" });
  assert.deepEqual(conn.calls.at(-1), ["session/set_model", { sessionId: "s1", modelId: "m2" }]);
  assert.deepEqual(posted.at(-1), { type: "model", modelId: "m2" });
  conn.handlers["session/set_model"] = () => {
    throw new Error("unknown model");
  };
  await controller.handlePanel({ type: "setModel", modelId: "nope" });
  assert.deepEqual(posted.slice(-2), [{ type: "error", message: "Could not switch to nope: unknown model" }, { type: "model", modelId: "m1" }]);
});

test("a mode switch reaches the panel's mode label", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  conn.handlers["session/set_mode"] = () => ({});
  await controller.setMode("acceptEdits");
  assert.deepEqual(conn.calls.at(-1), ["session/set_mode", { sessionId: "s1", modeId: "acceptEdits" }]);
  assert.deepEqual(posted.at(-1), { type: "mode", modeId: "acceptEdits" });
});

test("session list/search/load degrade to 'unavailable' on -32601", async () => {
  const { posted, controller } = setup();
  await controller.onServerState("ready");
  await controller.handlePanel({ type: "listSessions" });
  assert.deepEqual(posted.at(-1), { type: "sessions", sessions: [], query: "", unavailable: HISTORY_UNAVAILABLE });
  await controller.handlePanel({ type: "searchSessions", query: "parser" });
  assert.deepEqual(posted.at(-1), { type: "sessions", sessions: [], query: "parser", unavailable: HISTORY_UNAVAILABLE });
  await controller.handlePanel({ type: "resumeSession", sessionId: "old" });
  assert.deepEqual(posted.at(-1), { type: "sessions", sessions: [], unavailable: HISTORY_UNAVAILABLE });
});

test("session list/search/load with the golden fixtures; replayed updates follow the session", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  const list = fixture("session_list.json");
  const search = fixture("session_search.json");
  const load = fixture("session_load.json");
  // The open session that has not run a turn yet is listed too, with no title: nothing to resume.
  const fresh = { sessionId: "sess_fresh", title: "", cwd: "/work", updatedAt: "2026-01-01T00:00:00.000Z" };
  conn.handlers["session/list"] = () => ({ ...list.result, data: [fresh, ...list.result.data] });
  conn.handlers["session/search"] = () => search.result;
  await controller.handlePanel({ type: "listSessions" });
  assert.deepEqual(conn.calls.at(-1), ["session/list", { cwd: "/work", limit: 50 }]);
  const rows = posted.at(-1) as Extract<HostToPanel, { type: "sessions" }>;
  assert.deepEqual(rows.sessions.map((s) => [s.sessionId, s.title, s.detail]), [
    ["sess_5f1c2a9e0b7d4c33", "Why does the login test fail on CI?", "/home/ada/project"],
    ["sess_0a4d9c7be1f24410", "Rename the config loader", "/home/ada/project"],
  ]);
  await controller.handlePanel({ type: "searchSessions", query: " login test " });
  assert.deepEqual(conn.calls.at(-1), ["session/search", { query: "login test", limit: 50 }]);
  const hits = posted.at(-1) as Extract<HostToPanel, { type: "sessions" }>;
  assert.deepEqual(hits.sessions.map((s) => [s.title, s.detail, s.marked]), [
    ["Why does the **login** **test** fail on CI?", "user · sess_5f1c2a9e0b7d4c33", true],
    ["…the **login** **test** depends on the clock; freeze it with…", "assistant · sess_5f1c2a9e0b7d4c33", true],
  ]);
  const replayed = { sessionId: load.params.sessionId, turnId: "t0", seq: 1, update: { kind: "user_message_chunk" as const, text: "Why does the login test fail on CI?" } };
  conn.handlers["session/load"] = () => {
    controller.onUpdate(replayed); // the server replays before it answers
    return load.result;
  };
  posted.length = 0;
  await controller.handlePanel({ type: "resumeSession", sessionId: load.params.sessionId });
  assert.deepEqual(posted, [
    { type: "session", session: load.result, resumed: true, cwd: "/work" },
    { type: "update", params: replayed },
  ]);
  assert.equal(controller.session?.sessionId, load.params.sessionId);
});

test("a server restart drops the session and opens a new one", async () => {
  const { conn, posted, controller } = setup();
  await controller.onServerState("ready");
  await controller.onServerState("restarting", "agentls stopped; restarting");
  assert.equal(controller.session, undefined);
  await controller.onServerState("ready", "agentls restarted");
  assert.equal(conn.calls.filter(([m]) => m === "session/new").length, 2);
  assert.deepEqual(posted.slice(-2), [{ type: "server", state: "ready", message: "agentls restarted" }, { type: "session", session: SESSION, cwd: "/work" }]);
});

test("every server→client method in the schema is handled by the extension", () => {
  let dir = __dirname;
  while (!existsSync(join(dir, "protocol", "schema"))) dir = join(dir, "..");
  const schema = JSON.parse(readFileSync(join(dir, "protocol", "schema", "agentls.schema.json"), "utf8"));
  const serverToClient = Object.entries(schema.methods as Record<string, { direction: string }>)
    .filter(([, m]) => m.direction === "server_to_client")
    .map(([name]) => name)
    .sort();
  assert.deepEqual(serverToClient, [...HANDLED_SERVER_METHODS].sort());
});

function permissionParams(toolCallId = "call_2"): any {
  return { ...fixture("session_request_permission.json").params, sessionId: "s1", toolCall: { ...fixture("session_request_permission.json").params.toolCall, toolCallId } };
}

test("a permission request is asked in the panel; the panel's answer (with a note) is the result", async () => {
  const { posted, controller } = setup();
  await controller.onServerState("ready");
  const params = permissionParams();
  const answer = controller.requestPermission(params, cancellation());
  const asked = posted.at(-1) as Extract<HostToPanel, { type: "permissionRequest" }>;
  assert.equal(asked.type, "permissionRequest");
  assert.deepEqual(asked.params, params);
  await controller.handlePanel({ type: "permissionAnswer", requestId: asked.requestId, optionId: "reject_once", message: "use make clean" });
  assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "reject_once" }, message: "use make clean" });
  assert.deepEqual(posted.at(-1), { type: "permissionClosed", requestId: asked.requestId, reason: "answered" });
  // A second answer to the same request (a double click, a stale panel) changes nothing.
  await controller.handlePanel({ type: "permissionAnswer", requestId: asked.requestId, optionId: "allow_once" });
  assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "reject_once" }, message: "use make clean" });
});

test("the server withdrawing a permission request ($/cancelRequest) closes it in the panel; a late click does nothing", async () => {
  const { posted, controller } = setup();
  await controller.onServerState("ready");
  const token = cancellation();
  const answer = controller.requestPermission(permissionParams(), token);
  const asked = posted.at(-1) as Extract<HostToPanel, { type: "permissionRequest" }>;
  token.cancel();
  assert.deepEqual(await answer, { outcome: { outcome: "cancelled" } });
  assert.deepEqual(posted.at(-1), { type: "permissionClosed", requestId: asked.requestId, reason: "withdrawn" });
  posted.length = 0;
  await controller.handlePanel({ type: "permissionAnswer", requestId: asked.requestId, optionId: "allow_once" });
  assert.deepEqual(posted, []);
});

test("an open permission request is asked again when the panel reloads, after its session", async () => {
  const { posted, controller } = setup();
  await controller.onServerState("ready");
  const first = controller.requestPermission(permissionParams("call_a"), cancellation());
  void controller.requestPermission(permissionParams("call_b"), cancellation());
  const [a] = posted.filter((m) => m.type === "permissionRequest") as Extract<HostToPanel, { type: "permissionRequest" }>[];
  await controller.handlePanel({ type: "permissionAnswer", requestId: a.requestId, optionId: "allow_once" });
  await first;
  posted.length = 0;
  await controller.handlePanel({ type: "ready" });
  assert.deepEqual(posted.map((m) => m.type), ["server", "session", "permissionRequest"]);
  assert.equal((posted[2] as Extract<HostToPanel, { type: "permissionRequest" }>).params.toolCall.toolCallId, "call_b");
});

test("a permission request of another session, or with no session, is cancelled at once", async () => {
  const { posted, controller } = setup();
  assert.deepEqual(await controller.requestPermission(permissionParams(), cancellation()), { outcome: { outcome: "cancelled" } });
  await controller.onServerState("ready");
  assert.deepEqual(await controller.requestPermission({ ...permissionParams(), sessionId: "other" }, cancellation()), { outcome: { outcome: "cancelled" } });
  assert.equal(posted.filter((m) => m.type === "permissionRequest").length, 0);
});

const NO_PROVIDER = "no model provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY (or another provider's key), choose one with --provider (config key llm.provider), or install the embedded local model";

test("no model provider: the panel is asked to set one up, also when it opens after the failure", async () => {
  const { conn, posted, controller } = setup();
  conn.handlers["session/new"] = () => {
    throw Object.assign(new Error(NO_PROVIDER), { code: ErrorCode.ProviderUnavailable });
  };
  await controller.onServerState("ready");
  assert.deepEqual(posted.at(-1), { type: "setup", detail: NO_PROVIDER, offers: [] });
  posted.length = 0;
  await controller.handlePanel({ type: "ready" });
  assert.deepEqual(posted, [{ type: "server", state: "ready", message: undefined }, { type: "setup", detail: NO_PROVIDER, offers: [] }]);
  conn.handlers["session/new"] = () => SESSION;
  await controller.onServerState("ready");
  posted.length = 0;
  await controller.handlePanel({ type: "ready" });
  assert.deepEqual(posted.map((m) => m.type), ["server", "session"], "set up now: no setup card any more");
});

test("a session that could not start is said when the panel opens after the failure", async () => {
  const { conn, posted, controller } = setup();
  conn.handlers["session/new"] = () => {
    throw new Error("the data directory is read-only");
  };
  await controller.onServerState("ready");
  posted.length = 0;
  await controller.handlePanel({ type: "ready" });
  assert.deepEqual(posted.at(-1), { type: "error", message: "Could not start a session: the data directory is read-only" });
});

test("the panel's setup buttons reach the host", async () => {
  const conn = new FakeConnection();
  const asked: string[] = [];
  const host = { cwd: () => "/work", settings: () => ({}), openFile: () => {}, openLink: () => {}, copy: () => {}, log: () => {}, setupProvider: (how: string) => asked.push(how) };
  const posted: HostToPanel[] = [];
  const controller = new SessionController(conn, { post: (m) => posted.push(m) }, host);
  conn.handlers["session/new"] = () => {
    throw Object.assign(new Error(NO_PROVIDER), { code: ErrorCode.ProviderUnavailable });
  };
  await controller.onServerState("ready");
  assert.deepEqual(posted.at(-1), { type: "setup", detail: NO_PROVIDER, offers: ["key", "local"] }, "a host that can set one up offers it");
  await controller.handlePanel({ type: "setupProvider", how: "key" });
  await controller.handlePanel({ type: "setupProvider", how: "local" });
  assert.deepEqual(asked, ["key", "local"]);
});

test("a proposed edit reviewed in the editor: accepting as changed allows it with the user's text; rejecting there rejects", async () => {
  const { posted, controller, conn } = setup();
  const decisions: Array<{ accept: true; content: string } | { accept: false } | undefined> = [
    { accept: true, content: "def total(items):\n    return 42\n" },
    { accept: false },
  ];
  const shown: string[] = [];
  Object.assign((controller as any).host, {
    reviewProposal: async (proposal: { newText: string }, title: string) => {
      shown.push(`${title}: ${proposal.newText}`);
      return decisions.shift();
    },
  });
  void conn;
  await controller.onServerState("ready");
  const edit = { ...fixture("session_request_permission_edit.json").params, sessionId: "s1" };
  for (const expected of [
    { outcome: { outcome: "selected", optionId: "allow_once" }, updatedInput: { content: "def total(items):\n    return 42\n" } },
    { outcome: { outcome: "selected", optionId: "reject_once" } },
  ]) {
    const answer = controller.requestPermission(edit, cancellation());
    const asked = posted.at(-1) as Extract<HostToPanel, { type: "permissionRequest" }>;
    await controller.handlePanel({ type: "reviewProposal", requestId: asked.requestId });
    assert.deepEqual(await answer, expected);
  }
  assert.equal(shown.length, 2);
  assert.match(shown[0], /^Edit src\/cart.py: def total/);
});

test("a review closed when the request is answered in the panel (or withdrawn) answers nothing more", async () => {
  const { posted, controller } = setup();
  let settledSeen = false;
  Object.assign((controller as any).host, {
    reviewProposal: async (_p: unknown, _t: string, settled: Promise<void>) => {
      await settled;
      settledSeen = true;
      return { accept: true, content: "late" };
    },
  });
  await controller.onServerState("ready");
  const answer = controller.requestPermission({ ...fixture("session_request_permission_edit.json").params, sessionId: "s1" }, cancellation());
  const asked = posted.at(-1) as Extract<HostToPanel, { type: "permissionRequest" }>;
  const review = controller.handlePanel({ type: "reviewProposal", requestId: asked.requestId });
  await controller.handlePanel({ type: "permissionAnswer", requestId: asked.requestId, optionId: "reject_once" });
  await review;
  assert.ok(settledSeen);
  assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "reject_once" } });
});

test("rewind: a dry run, the user's choice, then the rewind; a conversation branch is loaded; conflicts stop it", async () => {
  const { posted, controller, conn } = setup();
  const choices: Array<"files" | "conversation" | undefined> = [undefined, "conversation"];
  const previews: unknown[] = [];
  Object.assign((controller as any).host, {
    confirmRewind: async (preview: unknown) => {
      previews.push(preview);
      return choices.shift();
    },
  });
  const rewinds: any[] = [];
  let conflicts: string[] = [];
  conn.handlers["session/rewind"] = (params) => {
    rewinds.push(params);
    if (params.dryRun) return { restored: ["/work/a.py"], removed: ["/work/new.md"], conflicts };
    return { restored: ["/work/a.py"], removed: ["/work/new.md"], conflicts: [], sessionId: "s2" };
  };
  conn.handlers["session/load"] = () => ({ ...SESSION, sessionId: "s2" });
  await controller.onServerState("ready");

  await controller.handlePanel({ type: "rewind", turnId: "t1" }); // the user says no
  assert.deepEqual(rewinds, [{ sessionId: "s1", turnId: "t1", dryRun: true }]);
  await controller.handlePanel({ type: "rewind", turnId: "t1" });
  assert.deepEqual(rewinds.at(-1), { sessionId: "s1", turnId: "t1", conversation: true });
  assert.deepEqual(previews[0], { restored: ["/work/a.py"], removed: ["/work/new.md"], conflicts: [] });
  const rewound = posted.find((m) => m.type === "rewound");
  assert.deepEqual(rewound, { type: "rewound", turnId: "t1", restored: ["/work/a.py"], removed: ["/work/new.md"] });
  assert.equal(controller.session?.sessionId, "s2", "the branch is the panel's session now");

  conflicts = ["/work/a.py"];
  posted.length = 0;
  rewinds.length = 0;
  await controller.handlePanel({ type: "rewind", turnId: "t1" });
  assert.equal(rewinds.length, 1, "only the dry run");
  assert.match((posted.at(-1) as { message: string }).message, /changed since agentls wrote them: \/work\/a.py/);
});

test("a question the server closes unanswered: its picker goes and the user is told once its call says it timed out, in the panel's words", async () => {
  const { posted, controller, host } = setupQuestions();
  const ask = fixture("session_ask_question.json").params;
  const question = { ...ask, sessionId: "s1", turnId: "t1" };
  const update = (seq: number, u: unknown) => controller.onUpdate({ sessionId: "s1", turnId: "t1", seq, update: u as never });
  await controller.onServerState("ready");
  update(1, { kind: "tool_call", toolCallId: "q1", name: "ask_user_question", title: "Ask", toolKind: "other", input: {} });
  const token = cancellation();
  const answer = controller.askQuestion(question, token);
  const pick = await host.win.nextPick();
  token.cancel(); // $/cancelRequest: the server's timeout
  assert.deepEqual(await answer, { declined: true });
  assert.ok(pick.disposed);
  assert.deepEqual(host.told, [], "nothing said before the call tells why");
  update(2, { kind: "tool_call_update", toolCallId: "q1", status: "completed", output: JSON.stringify({ error: "user_timeout", hint: "The user did not answer within 60 s." }) });
  assert.deepEqual(host.told, [BENIGN_NOTES.user_timeout]);
  assert.equal(posted.filter((m) => m.type === "update").length, 2, "the panel gets the same updates");
});

test("a question closed by a stopped turn, or answered, says nothing more", async () => {
  const { controller, host } = setupQuestions();
  const ask = fixture("session_ask_question.json").params;
  await controller.onServerState("ready");
  const update = (turnId: string, seq: number, u: unknown) => controller.onUpdate({ sessionId: "s1", turnId, seq, update: u as never });
  update("t1", 1, { kind: "tool_call", toolCallId: "q1", name: "ask_user_question", title: "Ask", toolKind: "other", input: {} });
  const token = cancellation();
  const stopped = controller.askQuestion({ ...ask, sessionId: "s1", turnId: "t1" }, token);
  await host.win.nextPick();
  token.cancel();
  await stopped;
  update("t1", 2, { kind: "tool_call_update", toolCallId: "q1", status: "failed", error: "Interrupted: the turn was cancelled" });
  update("t1", 3, { kind: "turn_end", terminal: "aborted", stopReason: "cancelled", usage: {} });
  update("t2", 4, { kind: "tool_call", toolCallId: "q2", name: "ask_user_question", title: "Ask", toolKind: "other", input: {} });
  const answered = controller.askQuestion({ ...ask, sessionId: "s1", turnId: "t2", questions: [ask.questions[0]] }, cancellation());
  (await host.win.nextPick()).pick("pytest");
  assert.deepEqual(await answered, { answers: { [ask.questions[0].question]: "pytest" } });
  update("t2", 5, { kind: "tool_call_update", toolCallId: "q2", status: "completed", output: JSON.stringify({ error: "user_timeout" }) });
  assert.deepEqual(host.told, []);
});

function setupQuestions() {
  const conn = new FakeConnection();
  conn.handlers["session/new"] = () => SESSION;
  const posted: HostToPanel[] = [];
  const win = new FakeWindow();
  const told: string[] = [];
  const host = {
    cwd: () => "/work",
    settings: () => ({}),
    openFile: () => {},
    openLink: () => {},
    copy: () => {},
    log: () => {},
    askQuestions: (questions: Question[], token?: CancellationLike) => askQuestions(win, questions, token),
    tell: (message: string) => told.push(message),
  };
  const controller = new SessionController(conn, { post: (m) => posted.push(m) }, host);
  return { posted, controller, host: { win, told } };
}
