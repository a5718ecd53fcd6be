// The chat panel: state + bridge + view. Everything it does goes through the host bridge.
import { detectBridge, type HostBridge } from "./bridge";
import { Composer } from "./composer";
import { h, icon, ICONS } from "./dom";
import type { HostToPanel, PanelToHost } from "./messages";
import { displayPath, Transcript, type Actions } from "./render";
import { setupCard } from "./setup";
import { closeAsk, initialState, openSessions, reduce, startPrompt, type PanelState } from "./state";

const SERVER_WORDS: Record<string, string> = {
  starting: "Starting agentls…",
  restarting: "Restarting agentls…",
  stopped: "agentls is not running",
};

export class Panel {
  readonly state: PanelState = initialState();
  private readonly transcript: Transcript;
  private readonly composer: Composer;
  private readonly status: HTMLElement;
  private readonly model: HTMLSelectElement;
  private readonly sessions: HTMLElement;
  private readonly sessionList: HTMLElement;
  private readonly sessionSearch: HTMLInputElement;
  private readonly log: HTMLElement;
  private readonly empty: HTMLElement;
  private modelKey = "";
  private setupShown?: { for: NonNullable<PanelState["setup"]>; el: HTMLElement };
  private searchTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    root: HTMLElement,
    private readonly bridge: HostBridge,
  ) {
    const actions: Actions = {
      displayPath: (path) => displayPath(path, this.state.cwd),
      copy: (text) => {
        this.post({ type: "copy", text });
      },
      openFile: (path, line) => this.post({ type: "openFile", path, line }),
      openLink: (href) => this.post({ type: "openLink", href }),
      trustFolder: () => this.post({ type: "trustFolder" }),
      answerPermission: (requestId, optionId, message) => {
        this.post({ type: "permissionAnswer", requestId, ...(optionId ? { optionId } : {}), ...(message?.trim() ? { message: message.trim() } : {}) });
        closeAsk(this.state, requestId);
        this.render();
      },
      reviewProposal: (requestId) => this.post({ type: "reviewProposal", requestId }),
      rewind: (turnId) => this.post({ type: "rewind", turnId }),
    };
    const newSession = h("button", { type: "button", class: "icon-button", id: "new-session", "aria-label": "New session", title: "New session" }, icon(ICONS.plus));
    const history = h("button", { type: "button", class: "icon-button", id: "history", "aria-label": "Sessions", title: "Sessions (resume, search)", "aria-haspopup": "dialog" }, icon(ICONS.history));
    this.model = h("select", { id: "model", "aria-label": "Model", title: "Model" });
    this.status = h("div", { id: "status", role: "status", "aria-live": "polite" });
    this.log = h("main", { id: "transcript", role: "log", "aria-label": "Conversation", "aria-live": "polite", tabindex: 0 });
    this.empty = h("div", { class: "empty" }, h("p", {}, "Ask the agent to explain, change or check code in this workspace."), h("p", { class: "hint" }, "Enter sends · Shift+Enter new line · Esc stops"));
    this.sessionSearch = h("input", { type: "search", id: "session-search", "aria-label": "Search sessions", placeholder: "Search sessions…" });
    this.sessionList = h("div", { id: "session-list", role: "list" });
    const closeSessions = h("button", { type: "button", class: "icon-button", "aria-label": "Close sessions", title: "Close" }, icon(ICONS.close));
    this.sessions = h(
      "section",
      { id: "sessions", class: "overlay", role: "dialog", "aria-label": "Sessions", hidden: true },
      h("div", { class: "overlay-head" }, this.sessionSearch, closeSessions),
      this.sessionList,
    );
    this.composer = new Composer({
      onSend: (prompt, text, images, context) => {
        // The user's message names the attached context as the stored history does.
        startPrompt(this.state, [text, ...context].filter(Boolean).join("\n"), images);
        this.post({ type: "prompt", prompt });
        this.transcript.follow();
        this.render();
      },
      onCancel: () => this.post({ type: "cancel" }),
      onError: (message) => this.receive({ type: "error", message }),
      onMentionQuery: (query) => this.post({ type: "mentionQuery", query }),
      onMention: (item) => this.post({ type: "mention", item }),
    });
    root.replaceChildren(
      h("header", { class: "toolbar" }, newSession, history, this.model, this.status),
      this.sessions,
      this.log,
      this.composer.root,
    );
    this.transcript = new Transcript(this.log, actions);

    newSession.addEventListener("click", () => this.post({ type: "newSession" }));
    history.addEventListener("click", () => this.toggleSessions(!this.state.sessions.open));
    closeSessions.addEventListener("click", () => this.toggleSessions(false));
    this.model.addEventListener("change", () => this.post({ type: "setModel", modelId: this.model.value }));
    this.sessionSearch.addEventListener("input", () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => this.requestSessions(), 250);
    });
    root.ownerDocument.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      if (this.state.sessions.open) this.toggleSessions(false);
      else if (this.state.busy) this.post({ type: "cancel" });
      else return;
      event.preventDefault();
    });
    bridge.listen((msg) => this.receive(msg));
    this.render();
    this.post({ type: "ready" });
    this.composer.focus();
  }

  receive(msg: HostToPanel): void {
    if (msg.type === "attach") this.composer.attach(msg.blocks, msg.text, msg.send);
    else if (msg.type === "activeEditor") this.composer.setActiveEditor(msg.block);
    else if (msg.type === "mentions") this.composer.showMentions(msg.query, msg.items);
    reduce(this.state, msg);
    if (msg.type === "focusInput") this.composer.focus();
    this.render();
  }

  private post(msg: PanelToHost): void {
    this.bridge.post(msg);
  }

  private toggleSessions(open: boolean): void {
    openSessions(this.state, open);
    if (open) {
      this.requestSessions();
      this.sessionSearch.focus();
    } else this.composer.focus();
    this.render();
  }

  private requestSessions(): void {
    const query = this.sessionSearch.value.trim();
    this.state.sessions.query = query;
    this.post(query ? { type: "searchSessions", query } : { type: "listSessions" });
  }

  render(): void {
    const s = this.state;
    this.transcript.render(s.items);
    if (!s.items.length) this.log.replaceChildren(s.setup && !s.session ? this.setupView(s.setup) : this.empty);
    else this.empty.remove();
    this.composer.setBusy(s.busy);
    this.composer.setEnabled(s.server.state === "ready" && !!s.session);
    this.renderStatus();
    this.renderModels();
    this.renderSessions();
  }

  /** The first-run card, made once per setup message: a render keeps what the user opened in it. */
  private setupView(setup: NonNullable<PanelState["setup"]>): HTMLElement {
    if (this.setupShown?.for !== setup) this.setupShown = { for: setup, el: setupCard(setup, (how) => this.post({ type: "setupProvider", how })) };
    return this.setupShown.el;
  }

  private renderStatus(): void {
    const s = this.state;
    let text: string;
    if (s.server.state !== "ready") text = s.server.message ?? SERVER_WORDS[s.server.state];
    else if (!s.session) text = s.setup ? "No model set up" : "Starting a session…";
    else text = s.busy ? "Working…" : `${s.session.modes.currentModeId} mode`;
    this.status.textContent = text;
    this.status.dataset.state = s.busy ? "busy" : s.server.state;
  }

  private renderModels(): void {
    const s = this.state;
    const models = s.session?.models.availableModels ?? [];
    const current = s.modelId ?? "";
    const key = `${s.session?.sessionId}|${models.map((m) => m.modelId).join(",")}|${current}`;
    if (key === this.modelKey) return;
    this.modelKey = key;
    const ids = models.map((m) => m.modelId);
    if (current && !ids.includes(current)) ids.unshift(current);
    this.model.replaceChildren(...ids.map((id) => h("option", { value: id }, id)));
    this.model.value = current;
    this.model.disabled = !ids.length;
  }

  private renderSessions(): void {
    const view = this.state.sessions;
    this.sessions.hidden = !view.open;
    if (!view.open) return;
    if (view.unavailable) {
      this.sessionList.replaceChildren(h("p", { class: "unavailable", role: "note" }, view.unavailable));
      return;
    }
    if (view.loading) {
      this.sessionList.replaceChildren(h("p", { class: "hint" }, "Loading…"));
      return;
    }
    if (!view.list.length) {
      this.sessionList.replaceChildren(h("p", { class: "hint" }, view.query ? "No session matches." : "No earlier sessions."));
      return;
    }
    this.sessionList.replaceChildren(
      ...view.list.map((item) => {
        const row = h(
          "button",
          { type: "button", class: "session-row", role: "listitem", "data-session-id": item.sessionId },
          h("span", { class: "session-title" }, item.marked ? marked(item.title) : item.title || item.sessionId),
          item.detail ? h("span", { class: "session-detail" }, item.detail) : null,
          item.updatedAt ? h("span", { class: "session-date" }, item.updatedAt) : null,
        );
        row.addEventListener("click", () => this.post({ type: "resumeSession", sessionId: item.sessionId }));
        return row;
      }),
    );
  }
}

/** Text with `**term**` marks → text nodes and <mark> elements. */
function marked(text: string): (string | HTMLElement)[] {
  return text.split(/\*\*(.+?)\*\*/g).map((part, i) => (i % 2 ? h("mark", {}, part) : part));
}

function boot(): void {
  const root = document.getElementById("app");
  if (!root) return;
  const panel = new Panel(root, detectBridge());
  (window as unknown as { __agentPanel?: Panel }).__agentPanel = panel;
}

boot();
