// A proposed file change in VS Code's own diff view: the file as it is on the left (read-only),
// the proposal on the right as a scratch file the user may edit. Accept (the editor title's
// check, or the command) allows the change as the right side then reads; Reject refuses it.
import * as path from "node:path";
import * as vscode from "vscode";
import type { Diff } from "../../protocol/protocol";
import type { ProposalDecision } from "./controller";

export const ORIGINAL_SCHEME = "agentls-original";
const CONTEXT_KEY = "agentls.proposals";

interface OpenReview {
  proposed: vscode.Uri;
  decide(decision: ProposalDecision | undefined): void;
}

export class ProposalReviews implements vscode.Disposable {
  private readonly originals = new Map<string, string>();
  private readonly open = new Map<string, OpenReview>();
  private readonly registration: vscode.Disposable;
  private next = 1;

  constructor(private readonly scratch: vscode.Uri) {
    const originals = this.originals;
    this.registration = vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, {
      provideTextDocumentContent: (uri) => originals.get(uri.query) ?? "",
    });
  }

  /** Opens the diff view; resolves with the user's decision, or undefined once `settled` resolves first. */
  async review(proposal: Diff, title: string, settled: Promise<void>): Promise<ProposalDecision | undefined> {
    const id = `p${this.next++}`;
    const name = path.basename(proposal.path);
    const proposed = vscode.Uri.joinPath(this.scratch, "proposals", id, name);
    await vscode.workspace.fs.writeFile(proposed, new TextEncoder().encode(proposal.newText));
    this.originals.set(id, proposal.oldText ?? "");
    const original = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${name}`, query: id });
    const decided = new Promise<ProposalDecision | undefined>((resolve) => {
      this.open.set(proposed.toString(), { proposed, decide: resolve });
    });
    await this.publish();
    const label = proposal.oldText == null ? `${name} (new file proposed by agentls)` : `${name}: as it is ↔ as agentls proposes`;
    await vscode.commands.executeCommand("vscode.diff", original, proposed, label, { preview: false });
    const decision = await Promise.race([decided, settled.then(() => undefined)]);
    await this.close(proposed.toString(), id);
    return decision;
  }

  /** Accept the proposal shown in `uri` (the right side of its diff), as the user left it. */
  accept(uri?: vscode.Uri): void {
    const review = this.find(uri);
    if (!review) return;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === review.proposed.toString());
    review.decide({ accept: true, content: document ? document.getText() : "" });
  }

  reject(uri?: vscode.Uri): void {
    this.find(uri)?.decide({ accept: false });
  }

  private find(uri?: vscode.Uri): OpenReview | undefined {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (target) return this.open.get(target.toString());
    return this.open.size === 1 ? [...this.open.values()][0] : undefined;
  }

  private async close(key: string, id: string): Promise<void> {
    const review = this.open.get(key);
    this.open.delete(key);
    this.originals.delete(id);
    await this.publish();
    if (!review) return;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    if (document?.isDirty) await document.save(); // a scratch file: closing must not ask to save it
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === key) await vscode.window.tabGroups.close(tab);
      }
    }
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(review.proposed, ".."), { recursive: true, useTrash: false }).then(undefined, () => undefined);
  }

  /** The editor title's Accept / Reject show on the open proposals only. */
  private async publish(): Promise<void> {
    const paths = [...this.open.values()].map((r) => r.proposed.path);
    await vscode.commands.executeCommand("setContext", CONTEXT_KEY, paths);
  }

  dispose(): void {
    for (const review of this.open.values()) review.decide(undefined);
    this.registration.dispose();
  }
}

/** The question before a rewind, with what the dry run says it would change. */
export async function confirmRewind(preview: { restored: string[]; removed: string[] }, shown: (p: string) => string): Promise<"files" | "conversation" | undefined> {
  const files = [...preview.restored.map((p) => `restore ${shown(p)}`), ...preview.removed.map((p) => `delete ${shown(p)} (this turn made it)`)];
  const FILES = "Restore Files";
  const BOTH = "Restore Files and Conversation";
  const pick = await vscode.window.showWarningMessage(
    "Undo this turn and the turns after it?",
    {
      modal: true,
      detail: `${files.length ? files.join("\n") : "No files to change."}\n\n"${BOTH}" also starts a new session holding the conversation from before this turn; this one is kept.`,
    },
    FILES,
    BOTH,
  );
  return pick === FILES ? "files" : pick === BOTH ? "conversation" : undefined;
}
