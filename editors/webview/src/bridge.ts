// How the panel talks to its host. Three hosts, one interface:
//  - VS Code: `acquireVsCodeApi().postMessage(msg)` out, window `message` events in.
//  - JCEF (JetBrains): `window.__agentHostPost(json)` out; the host calls `window.__agentReceive(msg)`.
//  - a plain browser page (tests, demos): `window.parent.postMessage` out (or `window.__agentOutbox`
//    when there is no parent), window `message` events in.
import type { HostToPanel, PanelToHost } from "./messages";

export type BridgeKind = "vscode" | "jcef" | "browser";

export interface HostBridge {
  kind: BridgeKind;
  post(msg: PanelToHost): void;
  listen(handler: (msg: HostToPanel) => void): void;
}

interface VsCodeApi {
  postMessage(msg: unknown): void;
}

export interface HostWindow extends Window {
  acquireVsCodeApi?: () => VsCodeApi;
  __agentHostPost?: (json: string) => void;
  __agentReceive?: (msg: HostToPanel | string) => void;
  __agentOutbox?: PanelToHost[];
}

function isHostMessage(data: unknown): data is HostToPanel {
  return !!data && typeof data === "object" && typeof (data as { type?: unknown }).type === "string";
}

function windowMessages(win: HostWindow, handler: (msg: HostToPanel) => void): void {
  win.addEventListener("message", (event: MessageEvent) => {
    if (isHostMessage(event.data)) handler(event.data);
  });
}

export function detectBridge(win: HostWindow = window as HostWindow): HostBridge {
  if (typeof win.acquireVsCodeApi === "function") {
    const api = win.acquireVsCodeApi();
    return {
      kind: "vscode",
      post: (msg) => api.postMessage(msg),
      listen: (handler) => windowMessages(win, handler),
    };
  }
  if (typeof win.__agentHostPost === "function") {
    const hostPost = win.__agentHostPost;
    // The host may deliver before the panel listens: keep those messages until it does.
    const early: HostToPanel[] = [];
    let deliver: ((msg: HostToPanel) => void) | null = null;
    win.__agentReceive = (raw) => {
      const msg = typeof raw === "string" ? (JSON.parse(raw) as unknown) : raw;
      if (!isHostMessage(msg)) return;
      if (deliver) deliver(msg);
      else early.push(msg);
    };
    return {
      kind: "jcef",
      post: (msg) => hostPost(JSON.stringify(msg)),
      listen: (handler) => {
        deliver = handler;
        early.splice(0).forEach(handler);
      },
    };
  }
  return {
    kind: "browser",
    post: (msg) => {
      if (win.parent && win.parent !== win) win.parent.postMessage(msg, "*");
      else (win.__agentOutbox ??= []).push(msg);
    },
    listen: (handler) => windowMessages(win, handler),
  };
}
