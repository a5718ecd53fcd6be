// Activation: start `agentls serve`, host the chat view, forward between them, map the server's
// questions to VS Code's quick pick; permission requests are asked inline in the chat view.
import * as vscode from "vscode";
import type { AskQuestionResult, RequestPermissionResult } from "../../protocol/protocol";
import { findOnPath, NOT_FOUND, resolveServerCommand, withConnection, type ServerCommand } from "./command";
import { ServerConnection } from "./connection";
import { SessionController } from "./controller";
import { EditorContext } from "./editorcontext";
import { ChatViewProvider, VIEW_ID } from "./panel";
import { spawn } from "node:child_process";
import { chooseLocalModel, enterKey, forgetKeys, serverEnvironment, setupLine, setupLocalCommand, type KeyWindow } from "./setup";
import { askQuestions, type WindowLike } from "./ui";
import { confirmRewind, ProposalReviews } from "./review";

let connection: ServerConnection | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("agentls", { log: true });
  const ui = vscode.window as unknown as WindowLike;
  const view = new ChatViewProvider(context.extensionUri, (msg) => void controller.handlePanel(msg));
  // The active editor's chip is sent again when the panel loads; other context waits for it.
  const editor = new EditorContext(
    (msg) => (msg.type === "activeEditor" ? view.post(msg) : view.postContext(msg)),
    () => view.reveal(),
    () => vscode.Uri.file(cwd()).toString(),
  );
  const reviews = new ProposalReviews(context.globalStorageUri);
  const conn = new ServerConnection(output, {
    onState: (state, message) => void controller.onServerState(state, message),
    onUpdate: (params) => controller.onUpdate(params),
    onAskQuestion: (params, token): Promise<AskQuestionResult> => controller.askQuestion(params, token),
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
    setupProvider: (how) => void (how === "key" ? enterApiKey() : setupLocalModel()),
    panelReady: () => editor.panelReady(),
    mentions: (query) => editor.mentions(query),
    resolveMention: (item) => editor.resolve(item),
    confirmRewind: (preview) => confirmRewind(preview, (p) => vscode.workspace.asRelativePath(p)),
    reviewProposal: (proposal, _title, settled) => reviews.review(proposal, _title, settled),
    askQuestions: (questions, token) => askQuestions(ui, questions, token),
    tell: (message) => void vscode.window.showInformationMessage(message),
  });
  connection = conn;

  // Never waits on a notification: the chat view is not shown until activation has finished.
  const start = async () => {
    const command = await serverCommand();
    if (!command) {
      output.error(NOT_FOUND);
      void controller.onServerState("stopped", NOT_FOUND);
      void vscode.window.showErrorMessage(NOT_FOUND, "Open Settings").then((pick) => {
        if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.serverCommand");
      });
      return;
    }
    try {
      await conn.start(command, cwd(), await serverEnvironment(context.secrets, context.globalState));
    } catch (err) {
      void vscode.window.showErrorMessage(errorText(err), "Show Output", "Open Settings").then((pick) => {
        if (pick === "Show Output") output.show();
        if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "agentls.serverCommand");
      });
    }
  };

  const enterApiKey = async () => {
    if (!(await enterKey(vscode.window as unknown as KeyWindow, context.secrets))) return;
    await chooseLocalModel(context.globalState, false);
    await start();
  };

  const setupLocalModel = async () => {
    const command = await serverCommand();
    if (!command) return void vscode.window.showErrorMessage(NOT_FOUND);
    if (!(await installLocalModel(setupLocalCommand(command), output))) return;
    await chooseLocalModel(context.globalState, true);
    await start();
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
    editor,
    reviews,
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
    vscode.commands.registerCommand("agentls.acceptProposal", (uri?: vscode.Uri) => reviews.accept(uri)),
    vscode.commands.registerCommand("agentls.rejectProposal", (uri?: vscode.Uri) => reviews.reject(uri)),
    vscode.commands.registerCommand("agentls.showOutput", () => output.show()),
    vscode.commands.registerCommand("agentls.enterApiKey", () => enterApiKey()),
    vscode.commands.registerCommand("agentls.setupLocalModel", () => setupLocalModel()),
    vscode.commands.registerCommand("agentls.forgetApiKeys", async () => {
      await forgetKeys(context.secrets);
      void vscode.window.showInformationMessage("agentls: the stored API keys are gone; restart the server to stop using them.");
    }),
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
  void start();
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `agentls setup-local` under a progress notification (one step per package); true when installed. */
function installLocalModel(command: { command: string; args: string[] }, output: vscode.LogOutputChannel): Thenable<boolean> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "agentls: installing the embedded local model", cancellable: true },
    (progress, token) =>
      new Promise<boolean>((resolve) => {
        output.info(`running ${[command.command, ...command.args].join(" ")}`);
        const child = spawn(command.command, command.args, { cwd: cwd(), env: process.env, stdio: ["ignore", "pipe", "pipe"] });
        token.onCancellationRequested(() => child.kill());
        let done = 0;
        let result: { ok: boolean; text: string } = { ok: false, text: "the installer stopped without saying why; see the agentls output" };
        let pending = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          pending += chunk;
          const lines = pending.split("\n");
          pending = lines.pop() ?? "";
          for (const line of lines) {
            const parsed = setupLine(line);
            if (parsed?.kind === "progress") {
              progress.report({ increment: parsed.total ? ((parsed.done - done) * 100) / parsed.total : 0, message: `${parsed.name} (${parsed.done} of ${parsed.total})` });
              done = parsed.done;
            } else if (parsed) result = { ok: parsed.kind === "done", text: parsed.text };
          }
        });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => output.info(chunk.trimEnd()));
        child.on("error", (err) => {
          result = { ok: false, text: err.message };
        });
        child.on("close", (code) => {
          const ok = result.ok && code === 0;
          if (ok) void vscode.window.showInformationMessage(`agentls: ${result.text.replace(/; restart agentls to use it$/, "")}.`);
          else void vscode.window.showErrorMessage(`agentls: the local model was not installed: ${token.isCancellationRequested ? "cancelled" : result.text}`, "Show Output").then((pick) => pick && output.show());
          resolve(ok);
        });
      }),
  );
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
