// Items and Markdown to DOM. Each item renders to one element; the Transcript swaps an element
// only when its item's `rev` changed, and remembers which cards the user opened or closed.
import { h, icon, ICONS } from "./dom";
import { askView } from "./ask";
import { LiveMarkdown } from "./mdview";
import { inputView, outputView } from "./toolviews";
import { diffBlock, fileLink, pre, section, type Actions } from "./parts";
import {
  permissionWords,
  TERMINAL_WORDS,
  usageText,
  deniedText,
  userRejected,
  type CheckpointItem,
  type Item,
  type NoteItem,
  type PlanItem,
  type SubagentItem,
  type TextItem,
  type ThoughtItem,
  type ToolItem,
  type UserItem,
} from "./state";

export type { Actions };
export { codeBlock, markdown } from "./mdview";

// -- items --------------------------------------------------------------------------------------

const STATUS_WORDS: Record<string, string> = {
  pending: "pending",
  in_progress: "running",
  completed: "done",
  failed: "failed",
  denied: "not run",
  cancelled: "cancelled",
};

function toolOpenByDefault(item: ToolItem): boolean {
  if (item.permission === "pending") return true;
  if (item.toolKind === "execute" && item.status === "in_progress") return true;
  return !!item.diff || !!item.note;
}

function diffView(item: ToolItem, actions: Actions): HTMLElement | null {
  if (!item.diff) return null;
  return section("Changes", diffBlock(item.diff.path, item.diff.oldText, item.diff.newText, actions, item.diff.oldText == null ? "new file" : undefined));
}

export function displayPath(path: string, cwd?: string): string {
  if (cwd) {
    const base = cwd.replace(/[\\/]+$/, "");
    if (path.startsWith(base + "/") || path.startsWith(base + "\\")) return path.slice(base.length + 1);
  }
  const parts = path.split(/[\\/]/);
  return parts.length > 4 ? `…/${parts.slice(-3).join("/")}` : path;
}

function toolCard(item: ToolItem, actions: Actions, open: boolean): HTMLElement {
  const status = item.note && item.status !== "in_progress" ? "note" : item.status;
  const rejected = item.status === "denied" && userRejected(item.error, item.permission);
  const statusWord = item.ask ? "needs you" : status === "note" ? "no answer" : rejected ? "rejected" : (STATUS_WORDS[item.status] ?? item.status);
  const summary = h(
    "summary",
    {},
    h("span", { class: `kind kind-${item.toolKind}`, title: item.toolKind }, icon(ICONS[item.toolKind] ?? ICONS.other, item.toolKind)),
    h("span", { class: "tool-name" }, item.name),
    h("span", { class: "tool-title" }, item.title),
    h("span", { class: `status status-${status}`, "aria-label": `status: ${statusWord}` }, statusWord),
  );
  const body = h(
    "div",
    { class: "tool-body" },
    item.ask ? askView(item, item.ask, actions) : null,
    item.permission && !item.ask ? h("div", { class: `permission permission-${item.permission}` }, `Permission: ${permissionWords(item.permission)}`) : null,
    item.note ? h("div", { class: "note benign", role: "note" }, item.note) : null,
    inputView(item, actions),
    diffView(item, actions),
    outputView(item),
    item.status === "denied" ? section(rejected ? "Rejected" : "Not run", h("p", { class: "denied-text" }, deniedText(item.error, item.permission))) : null,
    item.status === "cancelled" ? h("p", { class: "note benign", role: "note" }, "Stopped with the turn; it did not finish.") : null,
    item.error && !item.note && item.status !== "denied" && item.status !== "cancelled" ? section("Error", pre(item.error, "error-text")) : null,
    item.locations.some((l) => l.path !== item.diff?.path)
      ? section("Files", h("div", { class: "locations" }, item.locations.map((l) => fileLink(l.path, actions, l.line))))
      : null,
  );
  const details = h("details", { open }, summary, body);
  const nested = item.parentToolCallId ? " tool-nested" : "";
  return h(
    "div",
    {
      class: `tool tool-${status}${nested}`,
      "data-kind": "tool",
      "data-tool-call-id": item.toolCallId,
      "data-parent-tool-call-id": item.parentToolCallId,
      "data-status": item.status,
    },
    details,
  );
}

const PLAN_MARKS: Record<string, string> = { pending: "○", in_progress: "◐", completed: "●", cancelled: "⊘" };

function planView(item: PlanItem): HTMLElement {
  const done = item.entries.filter((e) => e.status === "completed").length;
  return h(
    "div",
    { class: "plan", "data-kind": "plan", role: "group", "aria-label": "Plan" },
    h("div", { class: "label" }, `Plan · ${done}/${item.entries.length}`),
    h(
      "ol",
      {},
      item.entries.map((e) =>
        h("li", { class: `plan-${e.status}`, "data-status": e.status }, h("span", { class: "mark", "aria-label": e.status }, PLAN_MARKS[e.status] ?? "○"), e.content),
      ),
    ),
  );
}

function subagentView(item: SubagentItem, actions: Actions): HTMLElement {
  return h(
    "div",
    { class: `subagent subagent-${item.status}`, "data-kind": "subagent", "data-status": item.status },
    h("div", { class: "subagent-head" }, icon(ICONS.agent), h("span", { class: "profile" }, `Subagent · ${item.profile}`), h("span", { class: `status status-${item.status}` }, item.status)),
    item.summary ? h("div", { class: "subagent-summary" }, item.summary) : null,
    item.outputFiles.length ? h("div", { class: "locations" }, item.outputFiles.map((f) => fileLink(f, actions))) : null,
  );
}

export function renderItem(item: Item, actions: Actions, open: boolean | undefined): HTMLElement {
  switch (item.kind) {
    case "user":
      return userMessage(item);
    case "text":
    case "thought":
      return streamedItem(item, actions, open).el;
    case "tool":
      return toolCard(item, actions, item.ask ? true : (open ?? toolOpenByDefault(item)));
    case "plan":
      return planView(item);
    case "subagent":
      return subagentView(item, actions);
    case "turn":
      return h(
        "div",
        { class: `turn-end turn-${item.terminal}`, "data-kind": "turn", "data-terminal": item.terminal },
        h("span", { class: "terminal" }, TERMINAL_WORDS[item.terminal] ?? item.terminal),
        usageText(item.usage) ? h("span", { class: "usage" }, usageText(item.usage)) : null,
      );
    case "note":
      return noteView(item, actions);
    case "error":
      return h("div", { class: "error", "data-kind": "error", role: "alert" }, item.text);
    case "checkpoint":
      return checkpointView(item, actions);
  }
}

function checkpointView(item: CheckpointItem, actions: Actions): HTMLElement {
  const n = item.files.length;
  const what = `${n} ${n === 1 ? "file" : "files"} changed`;
  const names = item.files.map((f) => actions.displayPath(f)).join(", ");
  if (item.rewound) return h("div", { class: "checkpoint rewound", "data-kind": "checkpoint" }, `${what}, put back as before this turn`);
  const button = h("button", { type: "button", class: "rewind", title: `Put back ${names} as they were before this turn` }, "Rewind to before this turn…");
  button.addEventListener("click", () => actions.rewind(item.turnId));
  return h("div", { class: "checkpoint", "data-kind": "checkpoint" }, h("span", { class: "files", title: names }, what), button);
}

/** A stored prompt names its images as lines "[image image/png]": they show as chips. */
const IMAGE_LINE = /^\[image ([\w.+-]+\/[\w.+-]+)\]$/;

function userMessage(item: UserItem): HTMLElement {
  const lines = item.text.split("\n");
  const stored = lines.map((l) => IMAGE_LINE.exec(l.trim())?.[1]).filter((m): m is string => !!m);
  const text = stored.length ? lines.filter((l) => !IMAGE_LINE.test(l.trim())).join("\n").trim() : item.text;
  return h(
    "div",
    { class: "msg user", "data-kind": "user" },
    h("div", { class: "bubble" }, text),
    stored.length ? h("div", { class: "meta images" }, stored.map((mime) => h("span", { class: "image-chip", title: mime }, icon(ICONS.image), "image"))) : null,
    item.images ? h("div", { class: "meta" }, `${item.images} image${item.images > 1 ? "s" : ""} attached`) : null,
  );
}

/** A text or thinking item, with the Markdown in it that grows as the item streams. */
function streamedItem(item: TextItem | ThoughtItem, actions: Actions, open: boolean | undefined): { el: HTMLElement; live: LiveMarkdown } {
  const live = new LiveMarkdown(actions);
  live.update(item.text);
  const el =
    item.kind === "text"
      ? h("div", { class: "msg agent", "data-kind": "text" }, live.el)
      : h("details", { class: "thought", "data-kind": "thought", open: open ?? false }, h("summary", {}, "Thinking"), live.el);
  return { el, live };
}

function noteView(item: NoteItem, actions: Actions): HTMLElement {
  const note = h("div", { class: "note", "data-kind": "note", role: "note" }, item.text);
  if (item.trust) {
    const button = h("button", { type: "button", class: "trust-folder" }, "Trust this folder");
    button.addEventListener("click", () => actions.trustFolder());
    note.append(" ", button);
  }
  return note;
}

/** The conversation: keyed, incremental, keeps the user's open/closed choices and scroll. */
export class Transcript {
  private rendered = new Map<string, { rev: number; el: HTMLElement; live?: LiveMarkdown }>();
  private openState = new Map<string, boolean>();
  private following = false;
  /** The view keeps to the end as it grows, until the user scrolls up. */
  private atEnd = true;
  /** Where the last scroll to the end left the view: above it is the user's own scroll. */
  private endTop = 0;
  private endQueued = false;
  private streaming?: HTMLElement;
  private pinned?: HTMLElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly actions: Actions,
  ) {
    root.addEventListener("scroll", () => this.scrolled(), { passive: true });
  }

  /** The next render ends at the bottom, wherever the user had scrolled (they just sent a prompt). */
  follow(): void {
    this.following = true;
  }

  render(items: Item[]): void {
    const stick = this.following || this.atEnd;
    this.following = false;
    const seen = new Set<string>();
    let prev: Element | null = null;
    for (const item of items) {
      seen.add(item.id);
      let entry = this.rendered.get(item.id);
      if (entry?.live && entry.rev !== item.rev && (item.kind === "text" || item.kind === "thought")) {
        // A streaming answer: append to what is shown, never rebuild it.
        entry.live.update(item.text);
        entry.rev = item.rev;
      } else if (!entry || entry.rev !== item.rev) {
        const open = this.openState.get(item.id);
        const made = item.kind === "text" || item.kind === "thought" ? streamedItem(item, this.actions, open) : { el: renderItem(item, this.actions, open) };
        made.el.dataset.itemId = item.id;
        this.watchToggle(item.id, made.el);
        if (entry) entry.el.replaceWith(made.el);
        entry = { rev: item.rev, ...made };
        this.rendered.set(item.id, entry);
      }
      const expected: Element | null = prev ? prev.nextElementSibling : this.root.firstElementChild;
      if (expected !== entry.el) this.root.insertBefore(entry.el, expected);
      prev = entry.el;
    }
    for (const [id, entry] of this.rendered) {
      if (seen.has(id)) continue;
      entry.el.remove();
      this.rendered.delete(id);
      this.openState.delete(id);
    }
    this.markStreaming(items[items.length - 1]);
    this.pinPlan(items);
    if (stick) this.toEnd();
  }

  /** The latest plan stays in view at the top of the transcript while any of its steps is left. */
  private pinPlan(items: Item[]): void {
    let plan: PlanItem | undefined;
    for (let i = items.length - 1; i >= 0 && !plan; i--) if (items[i].kind === "plan") plan = items[i] as PlanItem;
    const open = plan?.entries.some((e) => e.status !== "completed" && e.status !== "cancelled");
    const el = plan && open ? this.rendered.get(plan.id)?.el : undefined;
    if (el === this.pinned) return;
    this.pinned?.classList.remove("pinned");
    el?.classList.add("pinned");
    this.pinned = el;
  }

  /** The log announces a message once, when it is complete: busy while it is the one streaming. */
  private markStreaming(last: Item | undefined): void {
    const el = last && (last.kind === "text" || last.kind === "thought") ? this.rendered.get(last.id)?.el : undefined;
    if (el === this.streaming) return;
    this.streaming?.removeAttribute("aria-busy");
    el?.setAttribute("aria-busy", "true");
    this.streaming = el;
  }

  /**
   * Scrolls to the end in the next frame, once however many chunks came: measuring the view at
   * every chunk would lay the whole transcript out at every chunk.
   */
  private toEnd(): void {
    this.atEnd = true;
    if (this.endQueued) return;
    this.endQueued = true;
    requestAnimationFrame(() => {
      this.endQueued = false;
      this.root.scrollTop = this.root.scrollHeight;
      this.endTop = this.root.scrollTop;
    });
  }

  private scrolled(): void {
    const root = this.root;
    if (root.scrollHeight - root.scrollTop - root.clientHeight < 40) this.atEnd = true;
    else if (root.scrollTop < this.endTop - 1) {
      this.atEnd = false;
      this.endTop = Infinity;
    }
  }

  private watchToggle(id: string, el: HTMLElement): void {
    const details = el.tagName === "DETAILS" ? (el as HTMLDetailsElement) : el.querySelector(":scope > details");
    if (!details) return;
    const initial = (details as HTMLDetailsElement).open;
    // Remember only what the user changed: the default may change as the card's status does.
    details.addEventListener("toggle", () => {
      const open = (details as HTMLDetailsElement).open;
      if (open === initial && !this.openState.has(id)) return;
      this.openState.set(id, open);
    });
  }
}
