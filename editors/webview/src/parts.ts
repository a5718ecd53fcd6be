// Pieces shared by the transcript's cards: labelled sections, file links, line diffs.
import { diffStats, hunks, lineDiff } from "./diff";
import { h, type Child } from "./dom";

export interface Actions {
  /** How to show a path (relative to the workspace when inside it). */
  displayPath(path: string): string;
  copy(text: string): void;
  openFile(path: string, line?: number): void;
  openLink(href: string): void;
  trustFolder(): void;
  /** Answer an inline permission request; no option id dismisses it. */
  answerPermission(requestId: string, optionId?: string, message?: string): void;
  /** Open a request's proposed change in the editor's diff view (to accept or reject there). */
  reviewProposal(requestId: string): void;
  /** Undo this turn and the later ones (the host asks first). */
  rewind(turnId: string): void;
}

export function section(label: string, ...content: Child[]): HTMLElement {
  return h("div", { class: "section" }, h("div", { class: "label" }, label), ...content);
}

export function pre(text: string, cls?: string): HTMLElement {
  return h("pre", { class: cls }, text);
}

export function fileLink(path: string, actions: Actions, line?: number | null): HTMLElement {
  const a = h("a", { href: "#", class: "file", title: path }, actions.displayPath(path) + (line ? `:${line}` : ""));
  a.addEventListener("click", (event) => {
    event.preventDefault();
    actions.openFile(path, line ?? undefined);
  });
  return a;
}

/** A file's change as hunks with a little context, a link to the file and +/− counts. */
export function diffBlock(path: string, oldText: string | null | undefined, newText: string, actions: Actions, badge?: string): HTMLElement {
  const lines = lineDiff(oldText, newText);
  const stats = diffStats(lines);
  const body = h("div", { class: "diff", role: "table", "aria-label": `Changes to ${path}` });
  for (const row of hunks(lines)) {
    if (row.op === "gap") body.appendChild(h("div", { class: "diff-gap" }, `⋯ ${row.skipped} unchanged line${row.skipped === 1 ? "" : "s"}`));
    else {
      const cls = row.op === "+" ? "add" : row.op === "-" ? "del" : "ctx";
      body.appendChild(h("div", { class: `diff-line ${cls}`, role: "row" }, h("span", { class: "diff-op" }, row.op), row.text));
    }
  }
  const head = h(
    "div",
    { class: "diff-head" },
    fileLink(path, actions),
    h("span", { class: "diff-stats" }, h("span", { class: "add" }, `+${stats.added}`), " ", h("span", { class: "del" }, `−${stats.removed}`)),
    badge ? h("span", { class: "badge" }, badge) : null,
  );
  return h("div", { class: "diff-block" }, head, body);
}
