// The agentls server process, spoken to with vscode-languageclient over stdio (LSP framing).
// Restarts it when it dies (a few times), and says so.
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type CancellationToken,
  type ClientCapabilities,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";
import type {
  AskQuestionParams,
  AskQuestionResult,
  ClientNotifications,
  ClientRequests,
  RequestPermissionParams,
  RequestPermissionResult,
  SessionUpdateParams,
} from "../../protocol/protocol";
import { Method } from "../../protocol/protocol";
import type { ServerState } from "../../webview/src/messages";
import type { ServerCommand } from "./command";
import type { AgentConnection } from "./controller";
import { RestartPolicy } from "./restart";

/** What this client can show, advertised in `capabilities.experimental.agentls`. */
export const CLIENT_CAPABILITIES = { permissions: true, questions: true, images: true, diffs: true, reportTurns: true };

export interface ConnectionEvents {
  onState(state: ServerState, message?: string): void;
  onUpdate(params: SessionUpdateParams): void;
  onAskQuestion(params: AskQuestionParams, token: CancellationToken): Promise<AskQuestionResult>;
  onRequestPermission(params: RequestPermissionParams, token: CancellationToken): Promise<RequestPermissionResult>;
}

const agentlsCapabilities: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities) {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), agentls: CLIENT_CAPABILITIES };
  },
  initialize() {},
  getState: () => ({ kind: "static" }),
  clear() {},
};

export class ServerConnection implements AgentConnection, vscode.Disposable {
  private client?: LanguageClient;
  private readonly policy = new RestartPolicy();
  private crashed = false;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly events: ConnectionEvents,
  ) {}

  /** `env`: added to this process's environment (what the user set up here: API keys from secret storage, the local model). */
  async start(command: ServerCommand, cwd: string, env: Record<string, string> = {}): Promise<void> {
    await this.stop();
    const added = Object.keys(env).length ? ` with ${Object.keys(env).join(", ")} as set up in this editor` : "";
    this.output.info(`starting ${[command.command, ...command.args].join(" ")} (from ${command.source}) in ${cwd}${added}`);
    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      options: { cwd, env: { ...process.env, ...env } },
      // stdio, without the `--stdio` flag that TransportKind.stdio would append
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.closed(),
      },
      initializationFailedHandler: (err) => {
        this.output.error(`initialize failed: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      },
    };
    const client = new LanguageClient("agentls", "agentls", serverOptions, clientOptions);
    client.registerFeature(agentlsCapabilities);
    client.onNotification(Method.SessionUpdate, (params: SessionUpdateParams) => this.events.onUpdate(params));
    client.onRequest(Method.SessionAskQuestion, (params: AskQuestionParams, token: CancellationToken) => this.events.onAskQuestion(params, token));
    client.onRequest(Method.SessionRequestPermission, (params: RequestPermissionParams, token: CancellationToken) =>
      this.events.onRequestPermission(params, token),
    );
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        const restarted = this.crashed;
        this.crashed = false;
        this.events.onState("ready", restarted ? "agentls restarted after it stopped unexpectedly" : undefined);
      } else if (e.newState === State.Stopped && !this.crashed) this.events.onState("stopped");
    });
    this.client = client;
    this.events.onState("starting");
    try {
      await client.start();
    } catch (err) {
      const message = `The agentls server did not start: ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(message);
      this.events.onState("stopped", message);
      throw new Error(message);
    }
  }

  private closed() {
    this.crashed = true;
    if (this.policy.allow()) {
      const message = "The agentls server stopped unexpectedly; restarting it.";
      this.output.warn(message);
      this.events.onState("restarting", message);
      void vscode.window.showWarningMessage(message, "Show Output").then((pick) => pick && this.output.show());
      return { action: CloseAction.Restart, handled: true };
    }
    const message = "The agentls server keeps stopping; it was not restarted. See the agentls output.";
    this.output.error(message);
    this.crashed = false;
    this.events.onState("stopped", message);
    void vscode.window.showErrorMessage(message, "Restart", "Show Output").then((pick) => {
      if (pick === "Restart") void vscode.commands.executeCommand("agentls.restartServer");
      if (pick === "Show Output") this.output.show();
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async request<M extends keyof ClientRequests>(method: M, params: ClientRequests[M]["params"]): Promise<ClientRequests[M]["result"]> {
    if (!this.client || !this.running) throw new Error("the agentls server is not running");
    return this.client.sendRequest(method, params);
  }

  notify<M extends keyof ClientNotifications>(method: M, params: ClientNotifications[M]): void {
    if (this.client && this.running) void this.client.sendNotification(method, params);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(3000);
      } catch (err) {
        this.output.warn(`stopping the server: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  dispose(): void {
    void this.stop();
  }
}
