// Pure mapping between the server's questions and VS Code's pickers.
// No `vscode` import: the adapter in ui.ts feeds these into the real API.
import type { AskQuestionResult, Question } from "../../protocol/protocol";

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
