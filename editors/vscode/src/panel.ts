// The chat panel as a WebviewView in the activity bar: the shared webview bundle, a fresh CSP
// nonce per load, and typed messages both ways.
import * as vscode from "vscode";
import { makeNonce, panelHtml } from "../../webview/src/html";
import type { HostToPanel, PanelToHost } from "../../webview/src/messages";

export const VIEW_ID = "agentls.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view?: vscode.WebviewView;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Whether the loaded panel said `ready`; context for it waits until it has. */
  private ready = false;
  private readonly waiting: HostToPanel[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (msg: PanelToHost) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const assets = vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
    view.webview.options = { enableScripts: true, localResourceRoots: [assets] };
    view.webview.html = panelHtml({
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, "panel.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, "panel.css")).toString(),
      nonce: makeNonce(),
      cspSource: view.webview.cspSource,
    });
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((msg: PanelToHost) => {
        this.onMessage(msg);
        // After the host's answer to `ready` (the session), so that a chip sent at once has one.
        if (msg?.type === "ready") {
          this.ready = true;
          this.waiting.splice(0).forEach((m) => this.post(m));
        }
      }),
      view.onDidDispose(() => {
        if (this.view !== view) return;
        this.view = undefined;
        this.ready = false;
      }),
    );
  }

  /** Messages before the view exists are dropped: the panel asks for the state with `ready`. */
  post(msg: HostToPanel): void {
    void this.view?.webview.postMessage(msg);
  }

  /** Context for the composer (chips): kept until the panel is loaded and ready, then posted. */
  postContext(msg: HostToPanel): void {
    if (this.view && this.ready) this.post(msg);
    else this.waiting.push(msg);
  }

  /** Bring the view into sight without taking the focus from the editor. */
  async show(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    this.post({ type: "focusInput" });
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
  }
}
