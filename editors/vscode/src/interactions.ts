// Pure mapping between the server's interaction requests and VS Code's pickers and dialogs.
// No `vscode` import: the adapter in ui.ts feeds these into the real API.
import type {
  AskQuestionResult,
  PermissionOption,
  Question,
  RequestPermissionParams,
  RequestPermissionResult,
} from "../../protocol/protocol";

export const OTHER_LABEL = "Other…";

export interface QuestionPickItem {
  label: string;
  description?: string;
  /** The free-text entry. */
  other?: boolean;
  alwaysShow?: boolean;
}

export type Answer = string | string[];

/** The picker's title; the "1/2" of several questions is the QuickPick's own step count. */
export function questionTitle(q: Question): string {
  return q.header ? `${q.header}: ${q.question}` : q.question;
}

export function questionPlaceholder(q: Question): string {
  return q.multiSelect
    ? "Pick any that apply, or choose Other… to type your own; Esc to decline"
    : "Pick one, or type your own answer and choose Other…; Esc to decline";
}

export function pickItems(q: Question, typed = ""): QuestionPickItem[] {
  const options: QuestionPickItem[] = q.options.map((o) => ({
    label: o.label,
    description: o.description ?? undefined,
  }));
  const text = typed.trim();
  const other: QuestionPickItem = {
    label: text && !q.multiSelect ? `Other: ${text}` : OTHER_LABEL,
    description: text && !q.multiSelect ? "your own answer" : "type your own answer",
    other: true,
    alwaysShow: true,
  };
  return [...options, other];
}

/**
 * The answer for one question from what was picked and typed; undefined when there is none
 * (Other picked but nothing typed, or nothing picked in a single-select question).
 */
export function answerFor(q: Question, picked: readonly QuestionPickItem[], typed: string): Answer | undefined {
  const text = typed.trim();
  const labels = picked.filter((p) => !p.other).map((p) => p.label);
  const wantsOther = picked.some((p) => p.other);
  if (q.multiSelect) {
    if (wantsOther && !text) return undefined;
    return wantsOther ? [...labels, text] : labels;
  }
  if (wantsOther) return text || undefined;
  return labels[0];
}

/** All questions answered → their answers keyed by question text; any unanswered → declined. */
export function questionsResult(questions: Question[], answers: (Answer | undefined)[]): AskQuestionResult {
  if (answers.length < questions.length || answers.some((a) => a === undefined)) return { declined: true };
  return { answers: Object.fromEntries(questions.map((q, i) => [q.question, answers[i] as Answer])) };
}

// -- permissions --------------------------------------------------------------------------------

export interface PermissionChoice {
  title: string;
  optionId: string;
  kind: PermissionOption["kind"];
}

const KIND_ORDER: Record<PermissionOption["kind"], number> = {
  allow_once: 0,
  allow_always: 1,
  reject_once: 2,
  reject_always: 3,
};

export function permissionChoices(params: RequestPermissionParams): PermissionChoice[] {
  return [...params.options]
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind])
    .map((o) => ({ title: o.name, optionId: o.optionId, kind: o.kind }));
}

export function permissionMessage(params: RequestPermissionParams): { message: string; detail: string } {
  const call = params.toolCall;
  const lines: string[] = [];
  if (call.reason) lines.push(`Why you are asked: ${call.reason}.`);
  lines.push(call.risk ? `Tool: ${call.name} (${call.risk} risk)` : `Tool: ${call.name}`);
  const input = JSON.stringify(call.input, null, 2);
  lines.push(input.length > 600 ? `${input.slice(0, 600)}…` : input);
  return { message: `Allow the agent to ${lowerFirst(call.title)}?`, detail: lines.join("\n") };
}

function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text;
}

export function permissionResult(choice: PermissionChoice | undefined): RequestPermissionResult {
  return choice
    ? { outcome: { outcome: "selected", optionId: choice.optionId } }
    : { outcome: { outcome: "cancelled" } };
}
