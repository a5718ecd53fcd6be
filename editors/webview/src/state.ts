// The panel's state and the one function that folds host messages into it. No DOM here: the
// view renders whatever this produces, and unit tests drive it with the golden fixtures.
import type {
  PromptResult,
  RequestPermissionParams,
  SessionUpdate,
  SessionUpdateParams,
  ToolCall,
  Usage,
} from "../../protocol/protocol";
import type { HostToPanel } from "./messages";
import type { Item, PanelState, ToolItem } from "./model";
import { benignNote, BENIGN_NOTES, broadWords, fmt, mcpWords, outcomeCode, REPORT_WORDS, trustWords } from "./words";

export type * from "./model";
export { benignNote, BENIGN_NOTES, deniedText, fmt, permissionWords, TERMINAL_WORDS, usageText, userRejected } from "./words";

export function initialState(): PanelState {
  return {
    server: { state: "starting" },
    busy: false,
    items: [],
    sessions: { open: false, loading: false, query: "", list: [] },
    lastSeq: 0,
    byKey: {},
    stepStart: 0,
    nextId: 1,
    rewindable: {},
  };
}

/** The `session/update` kinds this panel renders; fixtures of other kinds fail a test. */
export const HANDLED_KINDS: readonly string[] = [
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "permission",
  "plan",
  "subagent",
  "question",
  "model_switched",
  "mode_changed",
  "compaction",
  "stream_retry",
  "mcp_status",
  "workspace_trust",
  "store_warning",
  "checkpoint",
  "step_finish",
  "turn_end",
];

/** Fold one host message into the state (mutating it) and return it. */
export function reduce(state: PanelState, msg: HostToPanel): PanelState {
  switch (msg.type) {
    case "server":
      state.server = { state: msg.state, message: msg.message };
      if (msg.state !== "ready") {
        // The session went with the server: the next one comes with its own mode and model.
        state.busy = false;
        delete state.setup;
        delete state.session;
      }
      return state;
    case "session":
      resetTranscript(state);
      delete state.setup;
      state.session = msg.session;
      state.cwd = msg.cwd;
      state.modelId = msg.session.model;
      state.sessions.open = false;
      state.replaying = msg.resumed === true;
      if (msg.resumed) add(state, { kind: "note", text: "Resumed session." });
      return state;
    case "update":
      applyUpdate(state, msg.params);
      return state;
    case "promptResult":
      finishTurn(state, msg.result);
      return state;
    case "promptError":
      state.busy = false;
      add(state, { kind: "error", text: msg.message });
      return state;
    case "error":
      add(state, { kind: "error", text: msg.message });
      return state;
    case "model":
      state.modelId = msg.modelId;
      return state;
    case "mode":
      if (state.session) state.session.modes.currentModeId = msg.modeId as typeof state.session.modes.currentModeId;
      return state;
    case "sessions":
      state.sessions = {
        ...state.sessions,
        loading: false,
        list: msg.sessions,
        unavailable: msg.unavailable,
        query: msg.query ?? state.sessions.query,
      };
      return state;
    case "focusInput":
    case "attach":
    case "activeEditor":
    case "mentions":
      return state; // the composer's, not the transcript's
    case "permissionRequest":
      askPermission(state, msg.requestId, msg.params);
      return state;
    case "permissionClosed":
      closeAsk(state, msg.requestId);
      return state;
    case "setup":
      state.setup = { detail: msg.detail, offers: msg.offers ?? [] };
      return state;
    case "rewound":
      rewound(state, msg.turnId, msg.restored, msg.removed);
      return state;
    default:
      return ignore(msg, state); // a newer host may send more
  }
}

/** Exhaustive at compile time (`never`), tolerant at run time (a newer peer's messages). */
function ignore<T>(_unknown: never, result: T): T {
  return result;
}

/** The card a permission request is asked on: announced by `tool_call`, or made from the request. */
function askPermission(state: PanelState, requestId: string, params: RequestPermissionParams): void {
  const call = params.toolCall;
  const tool = findTool(state, params.turnId, call.toolCallId);
  if (tool.name === "tool" && tool.title === tool.toolCallId) {
    tool.name = call.name;
    tool.title = call.title;
    tool.input = call.input;
  }
  tool.permission = "pending";
  tool.ask = {
    requestId,
    options: params.options,
    reason: call.reason ?? undefined,
    risk: call.risk ?? undefined,
    proposal: call.proposal ?? undefined,
  };
  touch(tool);
}

/** The request is over (answered here, withdrawn by the server, or its turn ended). */
export function closeAsk(state: PanelState, requestId: string): PanelState {
  for (const item of state.items) {
    if (item.kind !== "tool" || item.ask?.requestId !== requestId) continue;
    delete item.ask;
    touch(item);
  }
  return state;
}

/** The panel's own actions (no host round trip needed to show them). */
export function startPrompt(state: PanelState, text: string, images: number): PanelState {
  add(state, { kind: "user", text, images });
  state.stepStart = state.items.length;
  state.busy = true;
  state.replaying = false;
  return state;
}

export function openSessions(state: PanelState, open: boolean): PanelState {
  state.sessions = { ...state.sessions, open, loading: open };
  return state;
}

function resetTranscript(state: PanelState): void {
  state.items = [];
  state.byKey = {};
  state.stepStart = 0;
  state.lastSeq = 0;
  state.busy = false;
}

type NewItem = Item extends infer T ? (T extends Item ? Omit<T, "id" | "rev"> : never) : never;

function add(state: PanelState, item: NewItem, key?: string): Item {
  const full = { ...item, id: `i${state.nextId++}`, rev: 1 } as Item;
  state.items.push(full);
  if (key) state.byKey[key] = full.id;
  return full;
}

function find<K extends Item["kind"]>(
  state: PanelState,
  key: string,
  kind: K,
): Extract<Item, { kind: K }> | undefined {
  const id = state.byKey[key];
  const item = id ? state.items.find((i) => i.id === id) : undefined;
  return item && item.kind === kind ? (item as Extract<Item, { kind: K }>) : undefined;
}

function touch(item: Item): void {
  item.rev++;
}

function applyUpdate(state: PanelState, params: SessionUpdateParams): void {
  if (state.session && params.sessionId !== state.session.sessionId) return;
  if (params.seq <= state.lastSeq) return; // a duplicate or a replay we already showed
  state.lastSeq = params.seq;
  applyKind(state, params.turnId, params.update);
}

function applyKind(state: PanelState, turnId: string, u: SessionUpdate): void {
  switch (u.kind) {
    case "user_message_chunk":
      if (u.origin === "report") {
        // A turn the server started for background subagents' reports: it runs like one of ours.
        add(state, { kind: "note", turnId, text: REPORT_WORDS });
        state.stepStart = state.items.length;
        state.busy = true;
      } else appendText(state, turnId, "user", u.text);
      return;
    case "agent_message_chunk":
      appendText(state, turnId, "text", u.text);
      return;
    case "agent_thought_chunk":
      appendText(state, turnId, "thought", u.text);
      return;
    case "tool_call":
      toolCall(state, turnId, u);
      return;
    case "tool_call_update": {
      const tool = findTool(state, turnId, u.toolCallId);
      tool.status = closedAs(u.status, u.error ?? undefined);
      if (u.output != null) tool.output = u.output;
      if (u.error != null) tool.error = u.error;
      if (u.diff) tool.diff = u.diff;
      tool.note = benignNote(tool);
      if (tool.name === "ask_user_question" && tool.note) answerQuestion(state, turnId, tool);
      touch(tool);
      return;
    }
    case "permission": {
      const tool = findTool(state, turnId, u.toolCallId);
      tool.permission = u.outcome ?? "pending";
      touch(tool);
      return;
    }
    case "plan": {
      const plan = find(state, `plan:${turnId}`, "plan");
      if (plan) {
        plan.entries = u.entries;
        touch(plan);
      } else add(state, { kind: "plan", turnId, entries: u.entries }, `plan:${turnId}`);
      return;
    }
    case "subagent": {
      const sub = find(state, `sub:${u.id}`, "subagent");
      const fields = {
        profile: u.profile,
        status: u.status,
        summary: u.summary ?? undefined,
        outputFiles: u.outputFiles ?? [],
      };
      if (sub) {
        Object.assign(sub, fields);
        touch(sub);
      } else add(state, { kind: "subagent", turnId, ...fields }, `sub:${u.id}`);
      return;
    }
    case "question":
      questionNote(state, turnId, u.outcome ?? null);
      return;
    case "model_switched":
      if (!state.replaying) state.modelId = u.model;
      add(state, { kind: "note", turnId, text: `Switched to ${u.model} (${u.reason}).` });
      return;
    case "mode_changed":
      if (state.session && !state.replaying) state.session.modes.currentModeId = u.mode;
      add(state, { kind: "note", turnId, text: `Now in ${u.mode} mode (${u.reason}).` });
      return;
    case "compaction":
      add(state, {
        kind: "note",
        turnId,
        text: `Compacted the conversation: ${fmt(u.before)} → ${fmt(u.after)} tokens.`,
      });
      return;
    case "mcp_status":
      add(state, { kind: "note", turnId, text: mcpWords(u.server, u.status, u.tools ?? undefined, u.error ?? undefined) });
      return;
    case "workspace_trust":
      if (u.broad) add(state, { kind: "note", turnId, text: broadWords(u.cwd, u.ignored) });
      else add(state, { kind: "note", turnId, text: trustWords(u.ignored), trust: !u.trusted });
      return;
    case "store_warning":
      add(state, { kind: "note", turnId, text: `Could not save this session (${u.error}); it goes on in memory.` });
      return;
    case "checkpoint":
      state.rewindable[turnId] = u.files;
      return;
    case "step_finish":
      state.stepStart = state.items.length;
      return;
    case "stream_retry":
      discardStep(state, turnId);
      add(state, {
        kind: "note",
        turnId,
        text: `The model call failed (${u.error}); retry ${u.attempt} in ${u.delay} s.`,
      });
      state.stepStart = state.items.length;
      return;
    case "turn_end":
      endTurn(state, turnId, u.terminal, u.stopReason, u.usage, u.error ?? undefined);
      return;
    default:
      return ignore(u, undefined); // kinds added later are ignored, as the protocol asks
  }
}

/** Drop what the failed model call streamed: its text, thinking and announced tool calls. */
function discardStep(state: PanelState, turnId: string): void {
  const kept = state.items.slice(0, state.stepStart);
  for (const item of state.items.slice(state.stepStart)) {
    const streamed = item.kind === "text" || item.kind === "thought" || (item.kind === "tool" && item.status === "pending");
    if (streamed && item.turnId === turnId) {
      for (const [key, id] of Object.entries(state.byKey)) if (id === item.id) delete state.byKey[key];
    } else kept.push(item);
  }
  state.items = kept;
}

function appendText(
  state: PanelState,
  turnId: string,
  kind: "text" | "thought" | "user",
  text: string,
): void {
  const last = state.items.length > state.stepStart ? state.items[state.items.length - 1] : undefined;
  if (last && last.kind === kind && last.turnId === turnId) {
    last.text += text;
    touch(last);
    return;
  }
  if (kind === "user") add(state, { kind, turnId, text, images: 0 });
  else add(state, { kind, turnId, text });
}

function toolCall(state: PanelState, turnId: string, u: ToolCall): void {
  const fields = {
    name: u.name,
    title: u.title,
    toolKind: u.toolKind,
    input: u.input,
    locations: u.locations ?? [],
    parentToolCallId: u.parentToolCallId ?? undefined,
  };
  const existing = find(state, `tool:${u.toolCallId}`, "tool");
  if (existing) {
    Object.assign(existing, fields);
    touch(existing);
    return;
  }
  add(
    state,
    { kind: "tool", turnId, toolCallId: u.toolCallId, status: "pending", ...fields },
    `tool:${u.toolCallId}`,
  );
}

/** A tool card for an id we have not seen announced (e.g. a replay that starts mid-turn). */
function findTool(state: PanelState, turnId: string, toolCallId: string): ToolItem {
  const found = find(state, `tool:${toolCallId}`, "tool");
  if (found) return found;
  return add(
    state,
    {
      kind: "tool",
      turnId,
      toolCallId,
      name: "tool",
      title: toolCallId,
      toolKind: "other",
      input: {},
      locations: [],
      status: "pending",
    },
    `tool:${toolCallId}`,
  ) as ToolItem;
}

/** A call stopped with its turn, or one the user rejected, whatever status the server gave it. */
function closedAs(status: ToolItem["status"], error: string | undefined): ToolItem["status"] {
  if (status !== "failed" || !error) return status;
  if (error.startsWith("Interrupted:")) return "cancelled";
  if (error.startsWith("The user denied")) return "denied";
  return status;
}

/** The question's note says how it ended when the tool tells (no answer in time, nobody there). */
function answerQuestion(state: PanelState, turnId: string, tool: ToolItem): void {
  const code = [tool.output, tool.error].map((t) => (t ? outcomeCode(t) : undefined)).find((c) => c && BENIGN_NOTES[c]);
  if (code && find(state, `question:${turnId}`, "note")) questionNote(state, turnId, code);
}

function questionNote(state: PanelState, turnId: string, outcome: string | null): void {
  const text =
    outcome === null
      ? "The agent asked you a question."
      : outcome === "answered"
        ? "You answered the agent's question."
        : outcome === "declined"
          ? "You declined the agent's question."
          : (BENIGN_NOTES[outcome] ?? `Question: ${outcome}.`);
  const key = `question:${turnId}`;
  const note = find(state, key, "note");
  if (note && outcome !== null) {
    note.text = text;
    touch(note);
    delete state.byKey[key];
  } else add(state, { kind: "note", turnId, text }, key);
}

function endTurn(
  state: PanelState,
  turnId: string,
  terminal: string,
  stopReason: string,
  usage: Usage,
  error?: string,
): void {
  if (find(state, `turn:${turnId}`, "turn")) return;
  state.busy = false;
  closeOpenTools(state, turnId, terminal);
  if (error) add(state, { kind: "error", turnId, text: error });
  add(state, { kind: "turn", turnId, terminal, stopReason, usage }, `turn:${turnId}`);
  const files = state.rewindable[turnId];
  if (files?.length) add(state, { kind: "checkpoint", turnId, files }, `cp:${turnId}`);
}

/** `turnId` and every later turn were undone: their rewind offers go, a note says what changed. */
function rewound(state: PanelState, turnId: string, restored: string[], removed: string[]): void {
  const from = state.items.findIndex((i) => i.turnId === turnId);
  for (const item of from < 0 ? [] : state.items.slice(from)) {
    if (item.kind !== "checkpoint" || item.rewound) continue;
    item.rewound = true;
    touch(item);
    delete state.rewindable[item.turnId];
  }
  const count = (n: number, what: string) => `${n} ${n === 1 ? "file" : "files"} ${what}`;
  const parts = [restored.length ? count(restored.length, "restored") : "", removed.length ? count(removed.length, "removed") : ""];
  add(state, { kind: "note", text: `Rewound to before this turn: ${parts.filter(Boolean).join(", ") || "no files to change"}.` });
}

/** A card the server never closed (a lost update, a child of a cancelled subagent) must not say "running" forever. */
function closeOpenTools(state: PanelState, turnId: string, terminal: string): void {
  for (const item of state.items) {
    if (item.kind !== "tool" || item.turnId !== turnId) continue;
    if (item.ask) {
      delete item.ask;
      touch(item);
    }
    if (item.status !== "pending" && item.status !== "in_progress") continue;
    if (terminal === "aborted") item.status = "cancelled";
    else {
      item.status = "failed";
      item.error = "The turn ended before this tool call finished.";
    }
    touch(item);
  }
}

function finishTurn(state: PanelState, result: PromptResult): void {
  endTurn(state, result.turnId, result.terminal, result.stopReason, result.usage, result.error ?? undefined);
  state.busy = false;
}
