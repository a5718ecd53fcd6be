// Forwards between the chat panel and the agentls server: panel messages become `session/*`
// requests, `session/update` notifications go to the panel. It keeps only what it must
// (the current session and whether a prompt is in flight); the server owns everything else.
// No `vscode` import: the extension passes in the connection, the panel and the host actions.
import type {
  AskQuestionParams,
  AskQuestionResult,
  ClientNotifications,
  ClientRequests,
  ContentBlock,
  Diff,
  ListSessionsResult,
  Question,
  RequestPermissionParams,
  RequestPermissionResult,
  RewindResult,
  SearchSessionsResult,
  SessionInfoResult,
  SessionUpdateParams,
} from "../../protocol/protocol";
import { ErrorCode, Method } from "../../protocol/protocol";
import type { ContextBlock, HostToPanel, MentionItem, PanelToHost, ServerState, SessionRow, SetupWay } from "../../webview/src/messages";
import { benignNote, BENIGN_NOTES } from "../../webview/src/words";
import type { CancellationLike } from "./ui";

/** The server→client methods this client answers; a test compares them with the schema. */
export const HANDLED_SERVER_METHODS: readonly string[] = [
  Method.SessionUpdate,
  Method.SessionAskQuestion,
  Method.SessionRequestPermission,
];

export const HISTORY_UNAVAILABLE = "Session history is not available from this agentls server yet.";

export interface AgentConnection {
  request<M extends keyof ClientRequests>(method: M, params: ClientRequests[M]["params"]): Promise<ClientRequests[M]["result"]>;
  notify<M extends keyof ClientNotifications>(method: M, params: ClientNotifications[M]): void;
}

export interface PanelSink {
  post(msg: HostToPanel): void;
}

export interface ControllerHost {
  cwd(): string;
  settings(): { model?: string; permissionMode?: string };
  openFile(path: string, line?: number): void;
  openLink(href: string): void;
  copy(text: string): void;
  log(message: string): void;
  /** The editor's own workspace trust, passed on `session/new`. */
  trusted?(): boolean;
  /** Let the user trust the folder (the editor's trust dialog). */
  trustFolder?(): void;
  /** Bring the panel into view: something there waits for the user. */
  reveal?(): void;
  /** Set up a model on first run (store a key, install the local model), then restart the server. */
  setupProvider?(how: SetupWay): void;
  /** The panel (re)loaded and said `ready`, after the host's answer. */
  panelReady?(): void;
  /** What `@query` matches (files, problems, terminal). */
  mentions?(query: string): Promise<MentionItem[]>;
  /** A picked mention's blocks, or why there are none. */
  resolveMention?(item: MentionItem): Promise<ContextBlock[] | string>;
  /** Ask before undoing turns, showing what a dry run says would change: "files", "conversation" (files and a branch session), or undefined: no. */
  confirmRewind?(preview: RewindResult): Promise<"files" | "conversation" | undefined>;
  /**
   * Show a proposed file change in the editor's diff view until the user decides there (the text
   * they accepted, maybe changed) or `settled` resolves (answered elsewhere, withdrawn): undefined.
   */
  reviewProposal?(proposal: Diff, title: string, settled: Promise<void>): Promise<ProposalDecision | undefined>;
  /** Ask the server's questions in the editor's own picker, closed when `token` is cancelled. */
  askQuestions?(questions: Question[], token?: CancellationLike): Promise<AskQuestionResult>;
  /** Tell the user something that happened out of sight (a picker the server closed). */
  tell?(message: string): void;
}

export type ProposalDecision = { accept: true; content: string } | { accept: false };

interface OpenPermission {
  params: RequestPermissionParams;
  settle(result: RequestPermissionResult): void;
  withdraw(): void;
  /** Resolves once the request is answered or withdrawn. */
  closed: Promise<void>;
}

const CANCELLED: RequestPermissionResult = { outcome: { outcome: "cancelled" } };

const CONTENT_TYPES = new Set(["text", "image", "resource", "resource_link"]);

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function errorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

export class SessionController {
  session?: SessionInfoResult;
  private server: { state: ServerState; message?: string } = { state: "starting" };
  private prompting = false;
  private creating?: Promise<void>;
  /** While `session/load` runs: its replayed updates, shown once the panel has the session. */
  private loading?: { sessionId: string; updates: SessionUpdateParams[] };
  /** Permission requests asked in the panel and not yet answered, by request id. */
  private readonly permissions = new Map<string, OpenPermission>();
  private nextRequest = 1;
  /** Why there is no session (no model set up, or session/new failed), said again to a panel that opens later. */
  private problem?: HostToPanel;
  /** The session's ask_user_question calls still running, by toolCallId. */
  private readonly questionCalls = new Set<string>();
  /** Turns whose question the server closed before the user answered: told why once its call ends. */
  private readonly withdrawnQuestions = new Set<string>();

  constructor(
    private readonly conn: AgentConnection,
    private readonly panel: PanelSink,
    private readonly host: ControllerHost,
  ) {}

  get busy(): boolean {
    return this.prompting;
  }

  async handlePanel(msg: PanelToHost): Promise<void> {
    switch (msg?.type) {
      case "ready":
        this.panel.post({ type: "server", ...this.server });
        if (this.session) this.panel.post({ type: "session", session: this.session, cwd: this.host.cwd() });
        else if (this.problem) this.panel.post(this.problem);
        for (const [requestId, open] of this.permissions) this.panel.post({ type: "permissionRequest", requestId, params: open.params });
        return this.host.panelReady?.();
      case "prompt":
        return this.prompt(msg.prompt);
      case "cancel":
        return this.cancel();
      case "newSession":
        return this.newSession();
      case "setModel":
        return this.setModel(msg.modelId);
      case "listSessions":
        return this.listSessions();
      case "searchSessions":
        return this.searchSessions(msg.query);
      case "resumeSession":
        return this.resume(msg.sessionId);
      case "openFile":
        return this.host.openFile(msg.path, msg.line);
      case "openLink":
        return this.host.openLink(msg.href);
      case "copy":
        return this.host.copy(msg.text);
      case "trustFolder":
        return this.host.trustFolder?.();
      case "permissionAnswer":
        return this.answerPermission(msg.requestId, msg.optionId, msg.message);
      case "setupProvider":
        return this.host.setupProvider?.(msg.how);
      case "mentionQuery":
        return this.mentionQuery(msg.query);
      case "mention":
        return this.mention(msg.item);
      case "rewind":
        return this.rewind(msg.turnId);
      case "reviewProposal":
        return this.reviewProposal(msg.requestId);
      default:
        this.host.log(`ignored a panel message of unknown type ${JSON.stringify((msg as { type?: unknown })?.type)}`);
    }
  }

  private async mentionQuery(query: string): Promise<void> {
    if (!this.host.mentions || typeof query !== "string") return;
    try {
      this.panel.post({ type: "mentions", query, items: await this.host.mentions(query) });
    } catch (err) {
      this.host.log(`@${query}: ${errorMessage(err)}`);
      this.panel.post({ type: "mentions", query, items: [] });
    }
  }

  private async mention(item: MentionItem): Promise<void> {
    if (!this.host.resolveMention || !item?.kind) return;
    try {
      const found = await this.host.resolveMention(item);
      this.panel.post(typeof found === "string" ? { type: "error", message: found } : { type: "attach", blocks: found });
    } catch (err) {
      this.panel.post({ type: "error", message: `Could not attach @${item.label}: ${errorMessage(err)}` });
    }
  }

  /** The connection's state changed; on (re)start a fresh session is opened. */
  async onServerState(state: ServerState, message?: string): Promise<void> {
    this.server = { state, message };
    this.panel.post({ type: "server", state, message });
    if (state !== "ready") {
      this.session = undefined;
      this.prompting = false;
      for (const requestId of [...this.permissions.keys()]) this.withdraw(requestId);
      return;
    }
    await this.newSession();
  }

  onUpdate(params: SessionUpdateParams): void {
    if (params.sessionId === this.loading?.sessionId) {
      this.loading.updates.push(params);
      return;
    }
    if (params.sessionId !== this.session?.sessionId) return;
    if (params.update.kind === "mode_changed") {
      this.session = { ...this.session, modes: { ...this.session.modes, currentModeId: params.update.mode } };
    }
    this.panel.post({ type: "update", params });
    this.questionEnded(params);
  }

  /**
   * `session/ask_question`, asked in the editor's picker. The server closes the picker with
   * `$/cancelRequest` when nobody answers in time (or the turn stops); the user is told which
   * once the question's call ends, in the panel's words.
   */
  async askQuestion(params: AskQuestionParams, token?: CancellationLike): Promise<AskQuestionResult> {
    if (!this.host.askQuestions) return { declined: true };
    const result = await this.host.askQuestions(params.questions, token);
    if (token?.isCancellationRequested) this.withdrawnQuestions.add(params.turnId);
    return result;
  }

  private questionEnded({ turnId, update }: SessionUpdateParams): void {
    if (update.kind === "tool_call" && update.name === "ask_user_question") this.questionCalls.add(update.toolCallId);
    else if (update.kind === "tool_call_update" && update.status !== "in_progress" && this.questionCalls.delete(update.toolCallId)) {
      if (this.withdrawnQuestions.delete(turnId) && benignNote(update) === BENIGN_NOTES.user_timeout) this.host.tell?.(BENIGN_NOTES.user_timeout);
    } else if (update.kind === "turn_end") this.withdrawnQuestions.delete(turnId);
  }

  async newSession(): Promise<void> {
    if (this.server.state !== "ready") return;
    if (this.creating) return this.creating;
    this.creating = (async () => {
      if (this.session && this.prompting) this.cancel();
      const old = this.session;
      const { model, permissionMode } = this.host.settings();
      try {
        this.session = await this.conn.request(Method.SessionNew, {
          cwd: this.host.cwd(),
          model: model || undefined,
          mode: (permissionMode || undefined) as ClientRequests["session/new"]["params"]["mode"],
          workspaceTrusted: this.host.trusted?.() || undefined,
        });
        this.prompting = false;
        this.problem = undefined;
        this.panel.post({ type: "session", session: this.session, cwd: this.host.cwd() });
        if (old) this.conn.request(Method.SessionClose, { sessionId: old.sessionId }).catch(() => undefined);
      } catch (err) {
        this.problem =
          errorCode(err) === ErrorCode.ProviderUnavailable
            ? { type: "setup", detail: errorMessage(err), offers: this.host.setupProvider ? ["key", "local"] : [] }
            : { type: "error", message: `Could not start a session: ${errorMessage(err)}` };
        this.panel.post(this.problem);
      }
    })();
    try {
      await this.creating;
    } finally {
      this.creating = undefined;
    }
  }

  async prompt(blocks: ContentBlock[]): Promise<void> {
    const prompt = (Array.isArray(blocks) ? blocks : []).filter((b) => b && CONTENT_TYPES.has(b.type));
    if (!this.session || !prompt.length) {
      this.panel.post({ type: "promptError", message: this.session ? "Nothing to send." : "No session yet: the server is not ready." });
      return;
    }
    this.prompting = true;
    try {
      const result = await this.conn.request(Method.SessionPrompt, {
        sessionId: this.session.sessionId,
        prompt: prompt as ClientRequests["session/prompt"]["params"]["prompt"],
      });
      this.panel.post({ type: "promptResult", result });
    } catch (err) {
      this.panel.post({ type: "promptError", message: errorMessage(err) });
    } finally {
      this.prompting = false;
    }
  }

  /**
   * `session/request_permission`: asked inline in the panel, answered from there. The server
   * withdraws it with `$/cancelRequest` (its approval timeout, a cancelled turn); the card closes.
   */
  requestPermission(params: RequestPermissionParams, token?: CancellationLike): Promise<RequestPermissionResult> {
    if (!this.session || params.sessionId !== this.session.sessionId || token?.isCancellationRequested) return Promise.resolve(CANCELLED);
    const requestId = `perm${this.nextRequest++}`;
    return new Promise((resolve) => {
      const subscription = token?.onCancellationRequested(() => this.withdraw(requestId));
      let ended = () => {};
      const closed = new Promise<void>((done) => (ended = done));
      const close = (reason: "answered" | "withdrawn", result: RequestPermissionResult) => {
        if (!this.permissions.delete(requestId)) return;
        subscription?.dispose();
        this.panel.post({ type: "permissionClosed", requestId, reason });
        ended();
        resolve(result);
      };
      this.permissions.set(requestId, {
        params,
        settle: (result) => close("answered", result),
        withdraw: () => close("withdrawn", CANCELLED),
        closed,
      });
      this.panel.post({ type: "permissionRequest", requestId, params });
      this.host.reveal?.();
    });
  }

  private withdraw(requestId: string): void {
    this.permissions.get(requestId)?.withdraw();
  }

  private answerPermission(requestId: string, optionId?: string, message?: string): void {
    const open = this.permissions.get(requestId);
    if (!open) return;
    const offered = optionId ? open.params.options.find((o) => o.optionId === optionId) : undefined;
    if (!offered) return open.settle(CANCELLED);
    const note = message?.trim();
    const rejecting = offered.kind.startsWith("reject");
    open.settle({ outcome: { outcome: "selected", optionId: offered.optionId }, ...(note && rejecting ? { message: note } : {}) });
  }

  /** The request's proposed change in the editor's diff view; accepting there allows it (with the user's text when they changed it). */
  private async reviewProposal(requestId: string): Promise<void> {
    const open = this.permissions.get(requestId);
    const proposal = open?.params.toolCall.proposal;
    if (!open || !proposal || !this.host.reviewProposal) return;
    const decision = await this.host.reviewProposal(proposal, open.params.toolCall.title, open.closed);
    if (!decision || !this.permissions.has(requestId)) return;
    const kind = decision.accept ? "allow_once" : "reject_once";
    const option = open.params.options.find((o) => o.kind === kind);
    if (!option) return;
    const edited = decision.accept && decision.content !== proposal.newText ? { updatedInput: { content: decision.content } } : {};
    open.settle({ outcome: { outcome: "selected", optionId: option.optionId }, ...edited });
  }

  /** Undo a turn and the later ones: a dry run first, the user's go-ahead, then the rewind; a branch session opens in the panel. */
  async rewind(turnId: string): Promise<void> {
    const session = this.session;
    if (!session || !turnId) return;
    if (this.prompting) {
      this.panel.post({ type: "error", message: "Stop the running turn before rewinding." });
      return;
    }
    try {
      const preview = await this.conn.request(Method.SessionRewind, { sessionId: session.sessionId, turnId, dryRun: true });
      if (preview.conflicts?.length) {
        this.panel.post({ type: "error", message: `Cannot rewind: changed since agentls wrote them: ${preview.conflicts.join(", ")}` });
        return;
      }
      const how = await this.host.confirmRewind?.(preview);
      if (!how) return;
      const done = await this.conn.request(Method.SessionRewind, {
        sessionId: session.sessionId,
        turnId,
        conversation: how === "conversation",
      });
      this.panel.post({ type: "rewound", turnId, restored: done.restored, removed: done.removed });
      if (done.sessionId) await this.resume(done.sessionId);
    } catch (err) {
      this.panel.post({ type: "error", message: `Could not rewind: ${errorMessage(err)}` });
    }
  }

  cancel(): void {
    if (this.session) this.conn.notify(Method.SessionCancel, { sessionId: this.session.sessionId });
  }

  async setModel(modelId: string): Promise<void> {
    if (!this.session || !modelId) return;
    try {
      await this.conn.request(Method.SessionSetModel, { sessionId: this.session.sessionId, modelId });
      this.panel.post({ type: "model", modelId });
    } catch (err) {
      this.panel.post({ type: "error", message: `Could not switch to ${modelId}: ${errorMessage(err)}` });
      this.panel.post({ type: "model", modelId: this.session.model });
    }
  }

  async setMode(modeId: string): Promise<void> {
    if (!this.session || !modeId) return;
    try {
      await this.conn.request(Method.SessionSetMode, {
        sessionId: this.session.sessionId,
        modeId: modeId as ClientRequests["session/set_mode"]["params"]["modeId"],
      });
      this.session = { ...this.session, modes: { ...this.session.modes, currentModeId: modeId as never } };
      this.panel.post({ type: "mode", modeId });
    } catch (err) {
      this.panel.post({ type: "error", message: `Could not switch to ${modeId} mode: ${errorMessage(err)}` });
    }
  }

  /** Stored sessions of this workspace (or search hits), or why there are none to show. */
  async fetchSessions(query = ""): Promise<SessionRow[] | { unavailable: string }> {
    try {
      if (query) return searchRows(await this.conn.request(Method.SessionSearch, { query, limit: 50 }));
      return listRows(await this.conn.request(Method.SessionList, { cwd: this.host.cwd(), limit: 50 }));
    } catch (err) {
      return { unavailable: errorCode(err) === ErrorCode.MethodNotFound ? HISTORY_UNAVAILABLE : `Could not list sessions: ${errorMessage(err)}` };
    }
  }

  async listSessions(): Promise<void> {
    return this.postSessions("");
  }

  async searchSessions(query: string): Promise<void> {
    return this.postSessions(typeof query === "string" ? query.trim() : "");
  }

  private async postSessions(query: string): Promise<void> {
    const found = await this.fetchSessions(query);
    if (Array.isArray(found)) this.panel.post({ type: "sessions", sessions: found, query });
    else this.panel.post({ type: "sessions", sessions: [], query, unavailable: found.unavailable });
  }

  /** `session/load`: the server replays the stored history as updates, then answers. */
  async resume(sessionId: string): Promise<void> {
    if (!sessionId || this.loading) return;
    if (this.session && this.prompting) this.cancel();
    const loading = { sessionId, updates: [] as SessionUpdateParams[] };
    this.loading = loading;
    try {
      const info = await this.conn.request(Method.SessionLoad, { sessionId });
      this.session = info;
      this.prompting = false;
      this.panel.post({ type: "session", session: info, resumed: true, cwd: this.host.cwd() });
      for (const params of loading.updates) this.panel.post({ type: "update", params });
    } catch (err) {
      const message = errorCode(err) === ErrorCode.MethodNotFound ? HISTORY_UNAVAILABLE : `Could not resume the session: ${errorMessage(err)}`;
      this.panel.post({ type: "sessions", sessions: [], unavailable: message });
    } finally {
      this.loading = undefined;
    }
  }
}

function when(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

/** Sessions to resume: an open session that has not run a turn yet (no title) has nothing to show. */
export function listRows(result: ListSessionsResult): SessionRow[] {
  return (result?.data ?? []).filter((row) => row.title).map((row) => ({
    sessionId: row.sessionId,
    title: row.title,
    detail: row.cwd,
    updatedAt: when(row.updatedAt),
  }));
}

/** Search hits as rows; the snippet keeps the server's `**` marks around matched terms. */
export function searchRows(result: SearchSessionsResult): SessionRow[] {
  return (result?.hits ?? []).map((hit) => ({
    sessionId: hit.sessionId,
    title: hit.snippet || hit.sessionId,
    detail: `${hit.role} · ${hit.sessionId}`,
    updatedAt: when(hit.timestamp),
    marked: true,
  }));
}
