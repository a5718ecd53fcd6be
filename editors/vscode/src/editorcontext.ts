// What the editor attaches to a prompt, read from VS Code: the selection ("Add Selection to
// agentls"), the active editor (agentls.sendActiveEditor), `@` mentions (workspace files,
// problems, terminal output) and "Fix with agentls" on a diagnostic. The blocks are made in
// context.ts; this file only reads the editor and posts them to the panel.
import * as vscode from "vscode";
import type { ContextBlock, HostToPanel, MentionItem } from "../../webview/src/messages";
import {
  activeBlock,
  excludeGlob,
  fileBlock,
  fixBlocks,
  gitignoreMatcher,
  MAX_SYMBOLS,
  mentionItems,
  NO_TERMINAL_OUTPUT,
  problemsBlock,
  rankFiles,
  selectionBlock,
  symbolBlock,
  TerminalLog,
  terminalBlock,
  type DiagnosticLike,
  type SymbolLike,
} from "./context";

export const FIX_COMMAND = "agentls.fixDiagnostic";
const FILE_LIMIT = 20_000;
const FILES_FRESH_MS = 30_000;
/** How long `@` waits for the language servers' symbols before answering without them. */
const SYMBOL_WAIT_MS = 1_500;

function plainRange(r: vscode.Range) {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function plainDiagnostic(d: vscode.Diagnostic): DiagnosticLike {
  const code = typeof d.code === "object" ? d.code.value : d.code;
  return { range: plainRange(d.range), message: d.message, severity: d.severity, source: d.source, code };
}

function name(uri: vscode.Uri): string {
  return vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1);
}

export class EditorContext implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly terminals = new TerminalLog<vscode.Terminal>();
  private files?: { at: number; list: Promise<{ label: string; uri: string }[]> };
  private activeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly post: (msg: HostToPanel) => void,
    private readonly reveal: () => Promise<void>,
    private readonly rootUri: () => string,
  ) {
    const changed = () => {
      clearTimeout(this.activeTimer);
      this.activeTimer = setTimeout(() => this.postActiveEditor(), 150);
    };
    const forgetFiles = () => (this.files = undefined);
    const watcher = vscode.workspace.createFileSystemWatcher("**/*", false, true, false);
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(changed),
      vscode.window.onDidChangeTextEditorSelection(changed),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("agentls.sendActiveEditor") && changed()),
      watcher,
      watcher.onDidCreate(forgetFiles),
      watcher.onDidDelete(forgetFiles),
      vscode.window.onDidStartTerminalShellExecution((e) => void this.record(e)),
      vscode.window.onDidCloseTerminal((t) => this.terminals.forget(t)),
      vscode.languages.registerCodeActionsProvider({ scheme: "file" }, new FixProvider(), { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] }),
      vscode.commands.registerCommand(FIX_COMMAND, (uri: string, d: DiagnosticLike) => this.fix(uri, d)),
      vscode.commands.registerCommand("agentls.addSelection", () => this.addSelection()),
      vscode.commands.registerCommand("agentls.toggleSendActiveEditor", () => this.toggleSendActiveEditor()),
    );
  }

  /** The panel (re)loaded: it gets the active editor's chip again. */
  panelReady(): void {
    this.postActiveEditor();
  }

  async addSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      void vscode.window.showInformationMessage("agentls: open a file and select some lines to add them.");
      return;
    }
    const blocks: ContextBlock[] = editor.selections
      .filter((s) => !s.isEmpty)
      .map((s) => selectionBlock(editor.document.uri.toString(), name(editor.document.uri), editor.document.getText(s), plainRange(s)));
    if (!blocks.length) blocks.push(this.documentBlock(editor.document));
    await this.reveal();
    this.post({ type: "attach", blocks });
  }

  /** Flips agentls.sendActiveEditor where it is set (the workspace's setting, else the user's). */
  async toggleSendActiveEditor(): Promise<void> {
    const config = vscode.workspace.getConfiguration("agentls");
    const on = !config.get<boolean>("sendActiveEditor", false);
    const inWorkspace = config.inspect<boolean>("sendActiveEditor")?.workspaceValue !== undefined;
    await config.update("sendActiveEditor", on, inWorkspace ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
    void vscode.window.showInformationMessage(on ? "agentls: the active editor's file and selection go with each prompt." : "agentls: the active editor is no longer sent with prompts.");
  }

  async mentions(query: string): Promise<MentionItem[]> {
    const all = await this.workspaceFiles();
    const byLabel = new Map(all.map((f) => [f.label, f.uri]));
    const files = rankFiles(query, [...byLabel.keys()], 30);
    const active = vscode.window.activeTerminal;
    return mentionItems(
      query,
      files.map((label) => ({ label, uri: byLabel.get(label)! })),
      { problems: this.diagnostics().reduce((n, [, list]) => n + list.length, 0), terminal: active ? this.terminalDetail(active) : undefined },
      await this.symbols(query),
    );
  }

  /** The workspace's symbols matching `query`, from the language servers (none without one); a slow provider is not waited for. */
  private async symbols(query: string): Promise<SymbolLike[]> {
    if (query.length < 2) return [];
    const asked = Promise.resolve(vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", query)).then(
      (found) => found ?? [],
      () => [],
    );
    const found = await Promise.race([asked, new Promise<vscode.SymbolInformation[]>((r) => setTimeout(() => r([]), SYMBOL_WAIT_MS))]);
    return found.slice(0, MAX_SYMBOLS).map((s) => ({
      name: s.name,
      container: s.containerName || undefined,
      path: vscode.workspace.asRelativePath(s.location.uri),
      uri: s.location.uri.toString(),
      range: {
        start: { line: s.location.range.start.line, character: s.location.range.start.character },
        end: { line: s.location.range.end.line, character: s.location.range.end.character },
      },
    }));
  }

  /** A picked mention's blocks, or why there are none. */
  async resolve(item: MentionItem): Promise<ContextBlock[] | string> {
    switch (item.kind) {
      case "problems": {
        const block = problemsBlock(this.rootUri(), this.diagnostics());
        return block ? [block] : "No problems are reported in the workspace.";
      }
      case "terminal": {
        const terminal = vscode.window.activeTerminal;
        const text = terminal && this.terminals.text(terminal);
        return terminal && text ? [terminalBlock(terminal.name, text)] : NO_TERMINAL_OUTPUT;
      }
      case "symbol": {
        if (!item.uri || !item.range) return "That symbol has no place.";
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(item.uri));
        const lines = Array.from({ length: doc.lineCount }, (_, i) => doc.lineAt(i).text);
        return [symbolBlock(item.uri, name(doc.uri), lines, item.range)];
      }
      case "file": {
        if (!item.uri) return "That file has no address.";
        const uri = vscode.Uri.parse(item.uri);
        try {
          const { size } = await vscode.workspace.fs.stat(uri);
          const bytes = size <= 256 * 1024 ? await vscode.workspace.fs.readFile(uri) : undefined;
          return [fileBlock(item.uri, name(uri), size, () => bytes)];
        } catch (err) {
          return `Cannot read ${item.label}: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
    }
  }

  private async fix(uri: string, d: DiagnosticLike): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const lines = Array.from({ length: doc.lineCount }, (_, i) => doc.lineAt(i).text);
    await this.reveal();
    this.post({ type: "attach", blocks: fixBlocks(uri, name(doc.uri), d, lines), text: "Fix this problem.", send: true });
  }

  private documentBlock(doc: vscode.TextDocument): ContextBlock {
    return fileBlock(doc.uri.toString(), name(doc.uri), Buffer.byteLength(doc.getText()), () => new TextEncoder().encode(doc.getText()));
  }

  private postActiveEditor(): void {
    const on = vscode.workspace.getConfiguration("agentls").get<boolean>("sendActiveEditor", false);
    const editor = vscode.window.activeTextEditor;
    if (!on || !editor || !["file", "untitled"].includes(editor.document.uri.scheme)) {
      this.post({ type: "activeEditor" });
      return;
    }
    const s = editor.selection;
    const uri = editor.document.uri;
    // An unsaved file has no path the agent could read: only its selection can go.
    if (s.isEmpty && uri.scheme !== "file") return this.post({ type: "activeEditor" });
    this.post({ type: "activeEditor", block: activeBlock(uri.toString(), name(uri), s.isEmpty ? undefined : { text: editor.document.getText(s), range: plainRange(s) }) });
  }

  private diagnostics(): [string, DiagnosticLike[]][] {
    return vscode.languages
      .getDiagnostics()
      .filter(([, list]) => list.length)
      .map(([uri, list]) => [name(uri), list.map(plainDiagnostic)]);
  }

  /** The workspace's files minus files.exclude, search.exclude and .gitignore; kept for a while. */
  private workspaceFiles(): Promise<{ label: string; uri: string }[]> {
    if (this.files && Date.now() - this.files.at < FILES_FRESH_MS) return this.files.list;
    const list = (async () => {
      const files = vscode.workspace.getConfiguration("files").get<Record<string, unknown>>("exclude");
      const search = vscode.workspace.getConfiguration("search").get<Record<string, unknown>>("exclude");
      const exclude = excludeGlob(files, search);
      const [found, ignores] = await Promise.all([vscode.workspace.findFiles("**/*", exclude, FILE_LIMIT), vscode.workspace.findFiles("**/.gitignore", exclude, 200)]);
      const rules = await Promise.all(
        ignores.map(async (uri) => ({
          dir: vscode.Uri.joinPath(uri, "..").path,
          ignored: gitignoreMatcher(new TextDecoder().decode(await vscode.workspace.fs.readFile(uri))),
        })),
      );
      return found
        .filter((uri) => !rules.some((r) => uri.path.startsWith(`${r.dir}/`) && r.ignored(uri.path.slice(r.dir.length + 1))))
        .map((uri) => ({ label: name(uri), uri: uri.toString() }));
    })();
    this.files = { at: Date.now(), list };
    list.catch(() => (this.files = undefined));
    return list;
  }

  private terminalDetail(terminal: vscode.Terminal): string | undefined {
    const done = this.terminals.finished(terminal);
    if (done) return `${terminal.name}: the last ${done === 1 ? "command" : `${done} commands`}`;
    return this.terminals.text(terminal) ? `${terminal.name}: a command still running` : undefined;
  }

  /** read() must be called as the command starts, or its first output is lost. */
  private async record(e: vscode.TerminalShellExecutionStartEvent): Promise<void> {
    const run = this.terminals.start(e.terminal, e.execution.commandLine.value);
    try {
      for await (const data of e.execution.read()) run.append(data);
    } catch {
      /* the terminal went away */
    } finally {
      run.finish();
    }
  }

  dispose(): void {
    clearTimeout(this.activeTimer);
    this.subscriptions.forEach((s) => s.dispose());
  }
}

/** "Fix with agentls" on each diagnostic under the cursor. */
class FixProvider implements vscode.CodeActionProvider {
  provideCodeActions(doc: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const several = context.diagnostics.length > 1;
    return context.diagnostics.map((d) => {
      const title = several ? `Fix with agentls: ${d.message.split("\n")[0].slice(0, 60)}` : "Fix with agentls";
      const action = new vscode.CodeAction(title, vscode.CodeActionKind.QuickFix);
      action.diagnostics = [d];
      action.command = { command: FIX_COMMAND, title, arguments: [doc.uri.toString(), plainDiagnostic(d)] };
      return action;
    });
  }
}
