// Activation: start `agentls serve`, host the chat view, forward between them, map the server's
// questions to VS Code's quick pick; permission requests are asked inline in the chat view.
import * as vscode from "vscode";
import type { RequestPermissionResult } from "../../protocol/protocol";
import { findOnPath, NOT_FOUND, resolveServerCommand, withConnection, type ServerCommand } from "./command";
import { ServerConnection } from "./connection";
import { SessionController } from "./controller";
import { ChatViewProvider, VIEW_ID } from "./panel";
import { askQuestions, type WindowLike } from "./ui";

let connection: ServerConnection | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("agentls", { log: true });
  const ui = vscode.window as unknown as WindowLike;
  const view = new ChatViewProvider(context.extensionUri, (msg) => void controller.handlePanel(msg));
  const conn = new ServerConnection(output, {
    onState: (state, message) => void controller.onServerState(state, message),
    onUpdate: (params) => controller.onUpdate(params),
    onAskQuestion: (params, token) => askQuestions(ui, params.questions, token),
    onRequestPermission: (params, token): Promise<RequestPermissionResult> => controller.requestPermission(params, token),
  });
  const controller = new SessionController(conn, view, {
    cwd,
    settings: () => {
      const config = vscode.workspace.getConfiguration("agentls");
      return { model: config.get<string>("model"), permissionMode: config.get<string>("permissionMode") };
    },
    openFile: (path, line) => void openFile(path, line),
    openLink: (href) => {
      if (/^(https?|mailto):/i.test(href)) void vscode.env.openExternal(vscode.Uri.parse(href));
    },
    copy: (text) => void vscode.env.clipboard.writeText(text),
    log: (message) => output.info(message),
    trusted: () => vscode.workspace.isTrusted,
    trustFolder: () => void vscode.commands.executeCommand("workbench.trust.manage"),
    reveal: () => void view.show(),
  });
  connection = conn;

  const start = async () => {
    const command = await serverCommand();
    if (!command) {
      output.error(NOT_FOUND);
      void controller.onServerState("stopped", NOT_FOUND);
      const pick = await vscode.window.showErrorMessage(NOT_FOUND, "Open Settings");
      if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.serverCommand");
      return;
    }
    try {
      await conn.start(command, cwd());
    } catch (err) {
      const pick = await vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err), "Show Output", "Open Settings");
      if (pick === "Show Output") output.show();
      if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.serverCommand");
    }
  };

  const whenReady = (action: () => unknown) => () => {
    if (!conn.running) void vscode.window.showWarningMessage("The agentls server is not running yet.");
    else return action();
  };

  context.subscriptions.push(
    // A folder trusted just now: new sessions get its config and skills.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void controller.newSession()),
    output,
    view,
    conn,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("agentls.newSession", whenReady(async () => {
      await controller.newSession();
      await view.reveal();
    })),
    vscode.commands.registerCommand("agentls.cancel", () => controller.cancel()),
    vscode.commands.registerCommand("agentls.switchModel", whenReady(() => switchModel(controller))),
    vscode.commands.registerCommand("agentls.resumeSession", whenReady(() => resumeSession(controller, view))),
    vscode.commands.registerCommand("agentls.restartServer", () => start()),
    vscode.commands.registerCommand("agentls.showOutput", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("agentls.serverCommand") || e.affectsConfiguration("agentls.server")) void start();
      else if (e.affectsConfiguration("agentls.permissionMode")) {
        void controller.setMode(vscode.workspace.getConfiguration("agentls").get<string>("permissionMode") ?? "default");
      } else if (e.affectsConfiguration("agentls.model")) {
        const model = vscode.workspace.getConfiguration("agentls").get<string>("model");
        if (model) void controller.setModel(model);
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await connection?.stop();
}

function cwd(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (folder?.uri.scheme === "file") return folder.uri.fsPath;
  return process.env.HOME ?? process.cwd();
}

async function serverCommand(): Promise<ServerCommand | undefined> {
  const config = vscode.workspace.getConfiguration("agentls");
  const setting = config.get<string>("serverCommand") ?? "";
  const onPath = setting.trim() ? undefined : findOnPath("agentls");
  const python = setting.trim() || onPath ? undefined : await pythonInterpreter();
  const command = resolveServerCommand({ setting, onPath, python });
  return command && withConnection(command, config.get<string>("server.connect") ?? "", config.get<string>("server.tokenFile") ?? "");
}

/** The interpreter selected in the Python extension, if it is installed. */
async function pythonInterpreter(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = (extension.isActive ? extension.exports : await extension.activate()) as {
      environments?: { getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined };
    };
    return api?.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri)?.path;
  } catch {
    return undefined;
  }
}

async function openFile(path: string, line?: number): Promise<void> {
  const base = vscode.Uri.file(cwd());
  const uri = /^([a-zA-Z]:[\\/]|\/)/.test(path) ? vscode.Uri.file(path) : vscode.Uri.joinPath(base, path);
  const selection = line ? new vscode.Range(line - 1, 0, line - 1, 0) : undefined;
  try {
    await vscode.window.showTextDocument(uri, { selection, preview: true });
  } catch (err) {
    void vscode.window.showWarningMessage(`Cannot open ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function switchModel(controller: SessionController): Promise<void> {
  const session = controller.session;
  if (!session) return;
  const items = session.models.availableModels.map((m) => ({
    label: m.modelId,
    description: m.modelId === session.model ? "current" : m.provider,
    detail: m.contextWindow ? `${m.contextWindow.toLocaleString()} tokens context${m.vision ? " · images" : ""}` : undefined,
  }));
  const pick = await vscode.window.showQuickPick(items, { title: "Switch model", placeHolder: "The model for the next turn" });
  if (pick) await controller.setModel(pick.label);
}

async function resumeSession(controller: SessionController, view: ChatViewProvider): Promise<void> {
  const found = await controller.fetchSessions();
  if (!Array.isArray(found)) {
    void vscode.window.showInformationMessage(found.unavailable);
    return;
  }
  if (!found.length) {
    void vscode.window.showInformationMessage("No earlier sessions in this workspace.");
    return;
  }
  const pick = await vscode.window.showQuickPick(
    found.map((s) => ({ label: s.title, description: s.updatedAt, detail: s.detail, sessionId: s.sessionId })),
    { title: "Resume session", matchOnDetail: true },
  );
  if (!pick) return;
  await view.reveal();
  await controller.resume(pick.sessionId);
}
