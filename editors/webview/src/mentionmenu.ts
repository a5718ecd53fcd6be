// The `@` list under the prompt: the host's answers to what the user typed after `@` (workspace
// files, `problems`, `terminal`); arrow keys move, Enter or Tab picks, Esc closes.
import { h } from "./dom";
import type { MentionItem } from "./messages";

/** The `@word` that ends at the caret (at the start or after a space), or undefined. */
export function mentionAt(value: string, caret: number): { query: string; start: number } | undefined {
  const match = /(^|\s)@([^\s@]*)$/.exec(value.slice(0, caret));
  if (!match) return undefined;
  return { query: match[2], start: match.index + match[1].length };
}

export class MentionMenu {
  readonly root: HTMLUListElement;
  private items: MentionItem[] = [];
  private active = 0;
  private waiting = false;
  query?: string;

  constructor(private readonly onPick: (item: MentionItem) => void) {
    this.root = h("ul", { class: "mention-menu", id: "mentions", role: "listbox", "aria-label": "Mentions", hidden: true });
  }

  get open(): boolean {
    return !this.root.hidden;
  }

  /** Waiting for the host's answer to `query`: an open list shows what it had; a closed one opens
   * with the answer (a host that offers no mentions never answers, and nothing opens). */
  expect(query: string): void {
    this.query = query;
    this.waiting = true;
    if (this.open) this.render();
  }

  /** The host's answer; one to an older query is dropped. */
  answer(query: string, items: MentionItem[]): void {
    if (query !== this.query) return;
    this.waiting = false;
    this.show(items);
  }

  close(): void {
    this.query = undefined;
    this.items = [];
    this.root.hidden = true;
    this.root.replaceChildren();
  }

  /** A key the list handles while open: true when it took it. */
  key(event: KeyboardEvent): boolean {
    if (!this.open) return false;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!this.items.length) return true;
      const step = event.key === "ArrowDown" ? 1 : -1;
      this.active = (this.active + step + this.items.length) % this.items.length;
      this.render();
      return true;
    }
    if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey) {
      if (!this.items.length) return false;
      this.pick(this.items[this.active]);
      return true;
    }
    if (event.key === "Escape") {
      this.close();
      return true;
    }
    return false;
  }

  private show(items: MentionItem[]): void {
    this.items = items;
    this.active = 0;
    this.root.hidden = false;
    this.render();
  }

  private pick(item: MentionItem): void {
    this.close();
    this.onPick(item);
  }

  private render(): void {
    if (!this.items.length) {
      this.root.replaceChildren(h("li", { class: "hint", role: "option", "aria-disabled": "true" }, this.waiting ? "Searching…" : "No match"));
      return;
    }
    this.root.replaceChildren(
      ...this.items.map((item, index) => {
        const row = h(
          "li",
          { role: "option", id: `mention-${index}`, "aria-selected": String(index === this.active), "data-kind": item.kind },
          h("span", { class: "label" }, `@${item.label}`),
          item.detail ? h("span", { class: "detail" }, item.detail) : null,
        );
        // mousedown, not click: the prompt keeps the focus.
        row.addEventListener("mousedown", (event) => {
          event.preventDefault();
          this.pick(item);
        });
        return row;
      }),
    );
    this.root.setAttribute("aria-activedescendant", `mention-${this.active}`);
  }
}
