// The thin adapter between the server's questions and VS Code's window API. The API comes in as a
// parameter (the real `vscode.window`, or a fake in unit tests), so nothing here is patched.
import type { AskQuestionResult, Question } from "../../protocol/protocol";
import {
  answerFor,
  pickItems,
  questionPlaceholder,
  questionsResult,
  questionTitle,
  type Answer,
  type QuestionPickItem,
} from "./interactions";

export interface Disposable {
  dispose(): unknown;
}
type Event<T> = (listener: (e: T) => unknown) => Disposable;

export interface CancellationLike {
  isCancellationRequested: boolean;
  onCancellationRequested: Event<unknown>;
}

/** The part of `vscode.QuickPick` used here. */
export interface QuickPickLike<T> {
  title: string | undefined;
  placeholder: string | undefined;
  step: number | undefined;
  totalSteps: number | undefined;
  items: readonly T[];
  activeItems: readonly T[];
  selectedItems: readonly T[];
  canSelectMany: boolean;
  ignoreFocusOut: boolean;
  matchOnDescription: boolean;
  value: string;
  onDidAccept: Event<void>;
  onDidHide: Event<void>;
  onDidChangeValue: Event<string>;
  show(): void;
  hide(): void;
  dispose(): void;
}

/** The part of `vscode.window` used here. */
export interface WindowLike {
  createQuickPick<T extends { label: string }>(): QuickPickLike<T>;
  showInputBox(options: { title?: string; prompt?: string; placeHolder?: string; ignoreFocusOut?: boolean }, token?: CancellationLike): PromiseLike<string | undefined>;
}

/** Ask each question in turn; Esc (or a cancelled request) on any of them declines them all. */
export async function askQuestions(win: WindowLike, questions: Question[], token?: CancellationLike): Promise<AskQuestionResult> {
  const answers: Answer[] = [];
  for (const [index, q] of questions.entries()) {
    if (token?.isCancellationRequested) return { declined: true };
    const answer = await askOne(win, q, index, questions.length, token);
    if (answer === undefined) return { declined: true };
    answers.push(answer);
  }
  return questionsResult(questions, answers);
}

function askOne(win: WindowLike, q: Question, index: number, total: number, token?: CancellationLike): Promise<Answer | undefined> {
  const pick = win.createQuickPick<QuestionPickItem>();
  pick.title = questionTitle(q);
  pick.placeholder = questionPlaceholder(q);
  if (total > 1) {
    pick.step = index + 1;
    pick.totalSteps = total;
  }
  pick.canSelectMany = q.multiSelect ?? false;
  pick.ignoreFocusOut = true;
  pick.matchOnDescription = true;
  pick.items = pickItems(q);
  const subscriptions: Disposable[] = [];
  return new Promise<Answer | undefined>((resolve) => {
    let settled = false;
    let typing = false; // hiding the pick to show the input box is not a dismissal
    const finish = (answer: Answer | undefined) => {
      if (settled) return;
      settled = true;
      subscriptions.forEach((s) => s.dispose());
      pick.dispose();
      resolve(answer);
    };
    if (!q.multiSelect) {
      // What the user types shows up as the Other entry, so typing + Enter answers in free text.
      subscriptions.push(pick.onDidChangeValue((value) => (pick.items = pickItems(q, value))));
    }
    subscriptions.push(
      pick.onDidAccept(async () => {
        const picked = pick.canSelectMany ? pick.selectedItems : pick.selectedItems.length ? pick.selectedItems : pick.activeItems.slice(0, 1);
        let typed = pick.value;
        if (picked.some((p) => p.other) && !typed.trim()) {
          typing = true;
          pick.hide();
          const title = total > 1 ? `${pick.title} (${index + 1}/${total})` : pick.title; // an input box has no step count
          typed = (await win.showInputBox({ title, prompt: q.question, placeHolder: "Your answer", ignoreFocusOut: true }, token)) ?? "";
        }
        finish(answerFor(q, picked, typed));
      }),
      pick.onDidHide(() => {
        if (!typing) finish(undefined);
      }),
    );
    if (token) subscriptions.push(token.onCancellationRequested(() => finish(undefined)));
    pick.show();
  });
}
