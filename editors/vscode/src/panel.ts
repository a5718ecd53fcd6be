// The chat panel as a WebviewView in the activity bar: the shared webview bundle, a fresh CSP
// nonce per load, and typed messages both ways.
import * as vscode from "vscode";
import { makeNonce, panelHtml } from "../../webview/src/html";
import type { HostToPanel, PanelToHost } from "../../webview/src/messages";

export const VIEW_ID = "agentls.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view?: vscode.WebviewView;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (msg: PanelToHost) => void,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const assets = vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
    view.webview.options = { enableScripts: true, localResourceRoots: [assets] };
    view.webview.html = panelHtml({
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, "panel.js")).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(assets, "panel.css")).toString(),
      nonce: makeNonce(),
      cspSource: view.webview.cspSource,
    });
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((msg: PanelToHost) => this.onMessage(msg)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Messages before the view exists are dropped: the panel asks for the state with `ready`. */
  post(msg: HostToPanel): void {
    void this.view?.webview.postMessage(msg);
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
