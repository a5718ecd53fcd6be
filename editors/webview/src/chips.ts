// Context chips: the editor context a prompt carries (a selection, a file, the problems, terminal
// output), shown in the composer until sent and named in the user's message as the server's
// history names them (`@src/app.py:10-14 (selection)`).
import type { Range } from "../../protocol/protocol";
import { h, icon, ICONS } from "./dom";
import type { ContextBlock } from "./messages";

/** 1-based inclusive lines of a 0-based, end-exclusive range: `10-14`, or `10` for one line. */
export function lineSpan(range: Range | null | undefined): string | undefined {
  if (!range) return undefined;
  const first = range.start.line + 1;
  const last = Math.max(first, range.end.line + ((range.end.character ?? 0) > 0 ? 1 : 0));
  return first === last ? String(first) : `${first}-${last}`;
}

function uriName(uri: string): string {
  const path = uri.replace(/^[a-z][\w+.-]*:\/\/[^/]*/i, "").split(/[?#]/)[0];
  return decodeURIComponent(path.split("/").filter(Boolean).pop() ?? uri);
}

/** `@name:lines (kind)`, the way the server's journal shows the block. */
export function chipLabel(block: ContextBlock): string {
  const name = block.name || uriName(block.uri);
  const lines = lineSpan(block.range);
  const place = lines ? `@${name}:${lines}` : `@${name}`;
  return block.context && block.context !== "file" ? `${place} (${block.context})` : place;
}

/** Same file, same lines, same kind: attaching it again adds nothing. */
export function sameChip(a: ContextBlock, b: ContextBlock): boolean {
  return a.uri === b.uri && a.context === b.context && lineSpan(a.range) === lineSpan(b.range) && a.type === b.type;
}

export function chipView(block: ContextBlock, onRemove: () => void, auto = false): HTMLElement {
  const label = chipLabel(block);
  const remove = h("button", { type: "button", class: "icon-button remove", "aria-label": `Remove ${label}`, title: "Remove" }, icon(ICONS.close));
  remove.addEventListener("click", onRemove);
  const title = auto ? `${label}: the active editor, sent with each prompt` : block.type === "resource" ? `${label}: ${block.text.length} characters` : `${label}: by reference`;
  return h(
    "div",
    { class: auto ? "chip auto" : "chip", role: "listitem", title, "data-context": block.context ?? "file" },
    h("span", { class: "chip-label" }, label),
    remove,
  );
}
