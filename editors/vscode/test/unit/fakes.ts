// A fake of the slice of `vscode.window` the adapter uses: quick picks and dialogs that a test
// drives the way a user would (type, pick, accept, press Esc).
import type { CancellationLike, Disposable, QuickPickLike, WindowLike } from "../../src/ui";

class Emitter<T> {
  private listeners = new Set<(e: T) => unknown>();
  event = (listener: (e: T) => unknown): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
}

export class FakeQuickPick<T extends { label: string }> implements QuickPickLike<T> {
  title: string | undefined;
  placeholder: string | undefined;
  step: number | undefined;
  totalSteps: number | undefined;
  private _items: readonly T[] = [];
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  canSelectMany = false;
  ignoreFocusOut = false;
  matchOnDescription = false;
  value = "";
  visible = false;
  disposed = false;
  private accept = new Emitter<void>();
  private hideEvent = new Emitter<void>();
  private valueEvent = new Emitter<string>();
  onDidAccept = this.accept.event;
  onDidHide = this.hideEvent.event;
  onDidChangeValue = this.valueEvent.event;

  get items(): readonly T[] {
    return this._items;
  }
  set items(items: readonly T[]) {
    this._items = items;
    this.activeItems = items.slice(0, 1);
    this.selectedItems = [];
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    if (!this.visible) return;
    this.visible = false;
    queueMicrotask(() => this.hideEvent.fire());
  }
  dispose(): void {
    this.disposed = true;
    this.hide();
  }

  // -- what a user does
  type(text: string): void {
    this.value = text;
    this.valueEvent.fire(text);
    const match = this._items.filter((i) => (i as { alwaysShow?: boolean }).alwaysShow || i.label.toLowerCase().includes(text.toLowerCase()));
    this.activeItems = match.slice(0, 1);
  }
  pick(...labels: string[]): void {
    const chosen = labels.map((l) => {
      const item = this._items.find((i) => i.label === l || i.label.startsWith(l));
      if (!item) throw new Error(`no item ${l} in ${this._items.map((i) => i.label).join(", ")}`);
      return item;
    });
    if (this.canSelectMany) this.selectedItems = chosen;
    else {
      this.activeItems = chosen;
      this.selectedItems = chosen;
    }
    this.accept.fire();
  }
  acceptActive(): void {
    if (!this.canSelectMany) this.selectedItems = this.activeItems;
    this.accept.fire();
  }
  escape(): void {
    this.hide();
  }
}

export class FakeWindow implements WindowLike {
  picks: FakeQuickPick<any>[] = [];
  inputBoxes: { options: unknown; answer: string | undefined }[] = [];
  nextInput: (string | undefined)[] = [];
  private pickWaiters: ((p: FakeQuickPick<any>) => void)[] = [];

  createQuickPick<T extends { label: string }>(): QuickPickLike<T> {
    const pick = new FakeQuickPick<T>();
    this.picks.push(pick);
    const origShow = pick.show.bind(pick);
    pick.show = () => {
      origShow();
      this.pickWaiters.shift()?.(pick);
    };
    return pick;
  }
  /** The next quick pick to be shown. */
  nextPick(): Promise<FakeQuickPick<any>> {
    const shown = this.picks.find((p) => p.visible && !(p as any).claimed);
    if (shown) {
      (shown as any).claimed = true;
      return Promise.resolve(shown);
    }
    return new Promise((resolve) =>
      this.pickWaiters.push((p) => {
        (p as any).claimed = true;
        resolve(p);
      }),
    );
  }
  async showInputBox(options: unknown, _token?: CancellationLike): Promise<string | undefined> {
    const answer = this.nextInput.shift();
    this.inputBoxes.push({ options, answer });
    return answer;
  }
}

export function cancellation(): CancellationLike & { cancel(): void } {
  const emitter = new Emitter<unknown>();
  const token = {
    isCancellationRequested: false,
    onCancellationRequested: emitter.event,
    cancel() {
      token.isCancellationRequested = true;
      emitter.fire(undefined);
    },
  };
  return token;
}
