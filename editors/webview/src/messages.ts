// The typed messages between the chat panel and its host (the VS Code extension, the JetBrains
// plugin, or a test page). The host owns the agentls connection; the panel only renders and asks.
import type {
  ContentBlock,
  PromptResult,
  Range,
  RequestPermissionParams,
  ResourceContent,
  ResourceLink,
  SessionInfoResult,
  SessionUpdateParams,
} from "../../protocol/protocol";

export type ServerState = "starting" | "ready" | "restarting" | "stopped";

/** How a first run gets a model: an API key the host stores, or the embedded local model. */
export type SetupWay = "key" | "local";

/** One row of the session list (`session/list` data or a `session/search` hit). */
export interface SessionRow {
  sessionId: string;
  title: string;
  detail?: string;
  updatedAt?: string;
  /** The title marks matched terms with `**` (search hits). */
  marked?: boolean;
}

/** Editor context attached to a prompt: text (a selection, a file, problems, terminal output) or a file link. */
export type ContextBlock = ResourceContent | ResourceLink;

/** What `@` can attach: a workspace file, or what the host offers by name (`problems`, `terminal`). */
export interface MentionItem {
  kind: "file" | "problems" | "terminal" | "symbol";
  /** Shown in the list and, for a file, its path relative to the workspace. */
  label: string;
  detail?: string;
  uri?: string;
  /** A symbol's lines in its file. */
  range?: Range;
}

export type HostToPanel =
  | { type: "server"; state: ServerState; message?: string }
  /** A new (or resumed) session: the transcript starts over; a resume replays updates next. */
  | { type: "session"; session: SessionInfoResult; resumed?: boolean; cwd?: string }
  | { type: "update"; params: SessionUpdateParams }
  | { type: "promptResult"; result: PromptResult }
  | { type: "promptError"; message: string }
  | { type: "error"; message: string }
  | { type: "model"; modelId: string }
  /** The session's permission mode changed (a switch the host made). */
  | { type: "mode"; modeId: string }
  /** The session list, or why there is none (`unavailable`). */
  | { type: "sessions"; sessions: SessionRow[]; query?: string; unavailable?: string }
  | { type: "focusInput" }
  /** A permission request, asked inline on its tool card until answered or withdrawn. */
  | { type: "permissionRequest"; requestId: string; params: RequestPermissionParams }
  /** The request is over: answered (here or elsewhere) or withdrawn by the server (`$/cancelRequest`). */
  | { type: "permissionClosed"; requestId: string; reason: "answered" | "withdrawn" }
  /** No model to talk to (no key, no local model): the first-run card, with what the host can set up. */
  | { type: "setup"; detail: string; offers: SetupWay[] }
  /** Chips for the composer (a selection, a picked mention, a problem to fix); `text` fills the input, `send` sends at once. */
  | { type: "attach"; blocks: ContextBlock[]; text?: string; send?: boolean }
  /** The active editor's file and selection, sent with each prompt; none: no editor (or the setting is off). */
  | { type: "activeEditor"; block?: ContextBlock }
  /** What `@query` matches, best first. */
  | { type: "mentions"; query: string; items: MentionItem[] }
  /** `turnId` and the later turns were undone: their files restored (or removed, when they made them). */
  | { type: "rewound"; turnId: string; restored: string[]; removed: string[] };

export type PanelToHost =
  | { type: "ready" }
  | { type: "prompt"; prompt: ContentBlock[] }
  | { type: "cancel" }
  | { type: "newSession" }
  | { type: "setModel"; modelId: string }
  | { type: "listSessions" }
  | { type: "searchSessions"; query: string }
  | { type: "resumeSession"; sessionId: string }
  | { type: "openFile"; path: string; line?: number }
  | { type: "openLink"; href: string }
  | { type: "copy"; text: string }
  | { type: "trustFolder" }
  /** The user's choice; no option id means the user dismissed the request. `message` is a rejection's note. */
  | { type: "permissionAnswer"; requestId: string; optionId?: string; message?: string }
  | { type: "setupProvider"; how: SetupWay }
  /** The user typed `@query` in the composer: the host answers with `mentions`. */
  | { type: "mentionQuery"; query: string }
  /** The user picked a mention: the host answers with `attach` (or `error`). */
  | { type: "mention"; item: MentionItem }
  /** Undo this turn and the later ones: the host asks (files, or files and the conversation), then answers `rewound` or `error`. */
  | { type: "rewind"; turnId: string }
  /** Show the request's proposed change in the editor's own diff view, to accept (as the user left it) or reject there. */
  | { type: "reviewProposal"; requestId: string };

export type HostToPanelType = HostToPanel["type"];
export type PanelToHostType = PanelToHost["type"];
