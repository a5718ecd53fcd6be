// What the panel shows: transcript items and the panel state, as plain data.
import type { Diff, Location, PermissionOption, PlanEntry, SessionInfoResult, ToolCall, ToolCallRef, Usage } from "../../protocol/protocol";
import type { ServerState, SessionRow, SetupWay } from "./messages";

/** The wire's statuses, and "cancelled": stopped with its turn (the panel's own word for it). */
export type ToolStatus = "pending" | "in_progress" | "completed" | "failed" | "denied" | "cancelled";

interface ItemBase {
  id: string;
  /** Bumped on every change, so the view re-renders only what changed. */
  rev: number;
  turnId?: string;
}

export interface UserItem extends ItemBase {
  kind: "user";
  text: string;
  images: number;
}
export interface TextItem extends ItemBase {
  kind: "text";
  text: string;
}
export interface ThoughtItem extends ItemBase {
  kind: "thought";
  text: string;
}
export interface ToolItem extends ItemBase {
  kind: "tool";
  toolCallId: string;
  /** The task call of the subagent that made this call; the card is shown under it. */
  parentToolCallId?: string;
  name: string;
  title: string;
  toolKind: ToolCall["toolKind"];
  input: Record<string, unknown>;
  locations: Location[];
  status: ToolStatus;
  output?: string;
  error?: string;
  diff?: Diff;
  /** "pending" while the user is asked; then the chosen option id or "cancelled". */
  permission?: string;
  /** A benign outcome worth saying in words (no one could answer, no answer in time, ...). */
  note?: string;
  /** An open permission request for this call, answered on the card. */
  ask?: PermissionAsk;
}
export interface PermissionAsk {
  requestId: string;
  options: PermissionOption[];
  reason?: string;
  risk?: ToolCallRef["risk"];
  /** The whole file before and after, for an edit or a write (the server's proposal). */
  proposal?: Diff;
}
/** A turn that changed files through the file tools: they can be put back as they were before it. */
export interface CheckpointItem extends ItemBase {
  kind: "checkpoint";
  turnId: string;
  files: string[];
  /** Undone (by this turn's rewind or an earlier turn's). */
  rewound?: boolean;
}
export interface PlanItem extends ItemBase {
  kind: "plan";
  entries: PlanEntry[];
}
export interface SubagentItem extends ItemBase {
  kind: "subagent";
  profile: string;
  status: string;
  summary?: string;
  outputFiles: string[];
}
export interface TurnItem extends ItemBase {
  kind: "turn";
  terminal: string;
  stopReason: string;
  usage: Usage;
}
export interface NoteItem extends ItemBase {
  kind: "note";
  text: string;
  /** Offer "Trust this folder" (the workspace is untrusted). */
  trust?: boolean;
}
export interface ErrorItem extends ItemBase {
  kind: "error";
  text: string;
}

export type Item =
  | UserItem
  | TextItem
  | ThoughtItem
  | ToolItem
  | PlanItem
  | SubagentItem
  | TurnItem
  | NoteItem
  | ErrorItem
  | CheckpointItem;

export interface SessionsView {
  open: boolean;
  loading: boolean;
  query: string;
  list: SessionRow[];
  unavailable?: string;
}

export interface PanelState {
  server: { state: ServerState; message?: string };
  session?: SessionInfoResult;
  /** No model is set up: the first-run card instead of a session. */
  setup?: { detail: string; offers: SetupWay[] };
  /** The session's workspace, to show paths relative to it. */
  cwd?: string;
  modelId?: string;
  busy: boolean;
  items: Item[];
  sessions: SessionsView;
  lastSeq: number;
  /** A resumed session's history is being replayed: its mode and model switches are the past. */
  replaying?: boolean;
  /** Item ids by tool call id / subagent id / turn id, for in-place updates. */
  byKey: Record<string, string>;
  /** Where the current model call's items start: a `stream_retry` discards what follows. */
  stepStart: number;
  nextId: number;
  /** Turns whose file changes can be undone (`checkpoint`): the files each changed. */
  rewindable: Record<string, string[]>;
}
