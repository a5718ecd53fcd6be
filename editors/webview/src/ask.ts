// An open permission request on its tool card: what the call will do (the diff of an edit or a
// write, the command, the URL), why the user is asked, and the offered options. No option has
// the focus, so Enter typed anywhere does not approve.
import type { Diff, PermissionOption } from "../../protocol/protocol";
import { h } from "./dom";
import type { PermissionAsk, ToolItem } from "./model";
import { diffBlock, pre, type Actions } from "./parts";
import { permissionQuestion } from "./words";

function text(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key];
  return typeof value === "string" ? value : undefined;
}

/** What the call will do, shown before it is allowed; null when the input says it best. */
export function proposal(item: Pick<ToolItem, "name" | "input">, actions: Actions): HTMLElement | null {
  const path = text(item.input, "path") ?? text(item.input, "file_path");
  const command = text(item.input, "command");
  const url = text(item.input, "url");
  if (path && text(item.input, "new_string") !== undefined) return diffBlock(path, text(item.input, "old_string") ?? "", text(item.input, "new_string")!, actions);
  if (path && text(item.input, "content") !== undefined) return diffBlock(path, null, text(item.input, "content")!, actions, "whole file");
  if (command !== undefined) return pre(`$ ${command}`, "command");
  if (url !== undefined) return h("p", { class: "url" }, url);
  return null;
}

/** The server's proposal: the whole file before and after, and a way to review it in the editor. */
function wholeFile(change: Diff, requestId: string, actions: Actions): HTMLElement {
  const review = h("button", { type: "button", class: "ask-review" }, "Review in editor…");
  review.addEventListener("click", () => actions.reviewProposal(requestId));
  return h("div", { class: "ask-proposal" }, diffBlock(change.path, change.oldText ?? null, change.newText, actions, change.oldText == null ? "new file" : undefined), review);
}

function noteOption(options: PermissionOption[]): PermissionOption | undefined {
  return options.find((o) => o.kind === "reject_once") ?? options.find((o) => o.kind === "reject_always");
}

const KIND_ORDER: Record<PermissionOption["kind"], number> = { allow_once: 0, allow_always: 1, reject_once: 2, reject_always: 3 };

export function askView(item: ToolItem, ask: PermissionAsk, actions: Actions): HTMLElement {
  const answer = (optionId?: string, message?: string) => actions.answerPermission(ask.requestId, optionId, message);
  const options = [...ask.options].sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
  const buttons = options.map((o) => {
    const button = h("button", { type: "button", class: `ask-option ask-${o.kind}`, "data-option-id": o.optionId }, o.name);
    button.addEventListener("click", () => answer(o.optionId));
    return button;
  });
  const risk = ask.risk ? `${ask.risk} risk` : "";
  const why = ask.reason ? `Why you are asked: ${ask.reason}${risk ? ` (${risk})` : ""}.` : risk ? `This call is ${risk}.` : "";
  const reject = noteOption(ask.options);
  let noteForm: HTMLElement | null = null;
  let noteOpen: HTMLElement | null = null;
  if (reject) {
    const note = h("textarea", { class: "ask-note-text", rows: 2, "aria-label": "Your note to the agent", placeholder: "What should the agent do instead?" });
    const send = h("button", { type: "button", class: "ask-option ask-reject_once" }, "Reject and send the note");
    send.addEventListener("click", () => answer(reject.optionId, (note as HTMLTextAreaElement).value));
    const form = h("div", { class: "ask-note", hidden: true }, note, send);
    const open = h("button", { type: "button", class: "ask-option ask-note-open", "aria-expanded": "false" }, "Reject with a note…");
    open.addEventListener("click", () => {
      form.hidden = !form.hidden;
      open.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) (note as HTMLTextAreaElement).focus();
    });
    noteOpen = open;
    noteForm = form;
  }
  return h(
    "div",
    { class: `ask risk-${ask.risk ?? "unknown"}`, role: "group", "aria-label": "Permission request" },
    h("h4", { class: "ask-question" }, permissionQuestion(item.title)),
    why ? h("p", { class: "ask-why" }, why) : null,
    ask.proposal ? wholeFile(ask.proposal, ask.requestId, actions) : proposal(item, actions),
    h("div", { class: "ask-options" }, buttons),
    noteOpen,
    noteForm,
  );
}
