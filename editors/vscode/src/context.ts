// Editor context as prompt blocks: a selection, a file (its text, or a link when it is large or
// binary), the problems, a terminal's recent output; and what `@` offers (a fuzzy match over the
// workspace's files, minus what .gitignore ignores). No `vscode` import: editorcontext.ts passes
// in plain values, and unit tests do the same.
import type { Range, ResourceContent, ResourceLink } from "../../protocol/protocol";
import type { ContextBlock, MentionItem } from "../../webview/src/messages";

/** A file larger than this is attached by reference, not by its text. */
export const MAX_ATTACH_BYTES = 256 * 1024;
const MAX_PROBLEMS = 200;
const CONTEXT_LINES = 3;

export interface DiagnosticLike {
  range: Range;
  message: string;
  /** vscode.DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
  severity: number;
  source?: string;
  code?: string | number;
}

const SEVERITY = ["error", "warning", "info", "hint"];

export function selectionBlock(uri: string, name: string, text: string, range: Range): ResourceContent {
  return { type: "resource", uri, name, text, range, context: "selection" };
}

/** `path:line:col severity: message (source code)`, 1-based like the Problems view. */
export function diagnosticLine(path: string, d: DiagnosticLike): string {
  const origin = [d.source, d.code].filter((x) => x !== undefined && x !== "").join(" ");
  const where = `${path}:${d.range.start.line + 1}:${(d.range.start.character ?? 0) + 1}`;
  return `${where} ${SEVERITY[d.severity] ?? "error"}: ${d.message}${origin ? ` (${origin})` : ""}`;
}

/** The workspace's problems, worst first, or undefined when there are none. */
export function problemsBlock(rootUri: string, files: [path: string, diagnostics: DiagnosticLike[]][]): ResourceContent | undefined {
  const rows = files.flatMap(([path, list]) => list.map((d) => ({ d, line: diagnosticLine(path, d) })));
  if (!rows.length) return undefined;
  rows.sort((a, b) => a.d.severity - b.d.severity);
  const lines = rows.slice(0, MAX_PROBLEMS).map((r) => r.line);
  if (rows.length > MAX_PROBLEMS) lines.push(`… and ${rows.length - MAX_PROBLEMS} more`);
  return { type: "resource", uri: rootUri, name: "problems", text: lines.join("\n"), mimeType: "text/plain", context: "diagnostics" };
}

/** A problem to fix: the diagnostic with its range, and the lines around it as a selection. */
export function fixBlocks(uri: string, name: string, d: DiagnosticLike, documentLines: readonly string[]): ContextBlock[] {
  const first = Math.max(0, d.range.start.line - CONTEXT_LINES);
  const last = Math.min(documentLines.length - 1, d.range.end.line + CONTEXT_LINES);
  const around: ContextBlock[] =
    last >= first
      ? [selectionBlock(uri, name, documentLines.slice(first, last + 1).join("\n"), { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } })]
      : [];
  return [{ type: "resource", uri, name, text: diagnosticLine(name, d), range: d.range, context: "diagnostics" }, ...around];
}

/** Text, not binary: no NUL byte and valid UTF-8. */
export function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, 8192).includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A picked file: its text when it is a text file of at most 256 KB, else a link the model reads itself. */
export function fileBlock(uri: string, name: string, size: number, read: () => Uint8Array | undefined): ContextBlock {
  const link: ResourceLink = { type: "resource_link", uri, name, context: "file" };
  if (size > MAX_ATTACH_BYTES) return link;
  const bytes = read();
  const text = bytes && textOf(bytes);
  return text === undefined ? link : { type: "resource", uri, name, text, context: "file" };
}

/** The active editor: its selection, or the file itself by reference when nothing is selected. */
export function activeBlock(uri: string, name: string, selection?: { text: string; range: Range }): ContextBlock {
  if (selection?.text) return selectionBlock(uri, name, selection.text, selection.range);
  return { type: "resource_link", uri, name, context: "file" };
}

// -- @ mentions

/** How well `query` matches `path` in order (higher is better), or undefined when it does not. */
export function fuzzyScore(query: string, path: string): number | undefined {
  const q = query.toLowerCase();
  const p = path.toLowerCase();
  const base = p.lastIndexOf("/") + 1;
  let score = 0;
  let at = 0;
  let last = -2;
  for (let i = 0; i < p.length && at < q.length; i++) {
    if (p[i] !== q[at]) continue;
    score += 1;
    if (i === last + 1) score += 3;
    if (i === 0 || "/._- ".includes(p[i - 1])) score += 4;
    if (i >= base) score += 2;
    last = i;
    at++;
  }
  if (at < q.length) return undefined;
  const name = p.slice(base);
  if (name.startsWith(q)) score += 12;
  else if (name.includes(q)) score += 6;
  else if (p.includes(q)) score += 3;
  return score - path.length / 100;
}

/** The best matches first; with no query, the shortest paths. */
export function rankFiles(query: string, paths: readonly string[], limit = 30): string[] {
  if (!query) return [...paths].sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, limit);
  const scored: [number, string][] = [];
  for (const path of paths) {
    const score = fuzzyScore(query, path);
    if (score !== undefined) scored.push([score, path]);
  }
  scored.sort((a, b) => b[0] - a[0] || a[1].localeCompare(b[1]));
  return scored.slice(0, limit).map(([, path]) => path);
}

/** A workspace symbol as `@` offers it: its name, and where it is. */
export interface SymbolLike {
  name: string;
  container?: string;
  /** The file's path relative to the workspace. */
  path: string;
  uri: string;
  range: Range;
}

/** At most this many symbols follow the files. */
export const MAX_SYMBOLS = 10;

/** `@problems`, `@terminal` when the query starts them, then the files, then the symbols. */
export function mentionItems(
  query: string,
  files: { label: string; uri: string }[],
  offers: { problems: number; terminal?: string },
  symbols: SymbolLike[] = [],
): MentionItem[] {
  const q = query.toLowerCase();
  const items: MentionItem[] = [];
  if ("problems".startsWith(q)) items.push({ kind: "problems", label: "problems", detail: offers.problems ? `${offers.problems} in the workspace` : "none reported" });
  if ("terminal".startsWith(q)) items.push({ kind: "terminal", label: "terminal", detail: offers.terminal ?? "no output seen yet" });
  const found = symbols.slice(0, MAX_SYMBOLS).map((s) => ({
    kind: "symbol" as const,
    label: s.container ? `${s.container}.${s.name}` : s.name,
    detail: `${s.path}:${s.range.start.line + 1}`,
    uri: s.uri,
    range: s.range,
  }));
  return [...items, ...files.map((f) => ({ kind: "file" as const, label: f.label, uri: f.uri })), ...found];
}

/** A symbol's lines as a selection block (whole lines, `end` exclusive). */
export function symbolBlock(uri: string, name: string, documentLines: readonly string[], range: Range): ResourceContent {
  const first = Math.max(0, range.start.line);
  const last = Math.min(documentLines.length - 1, Math.max(first, range.end.line));
  const text = documentLines.slice(first, last + 1).join("\n");
  return selectionBlock(uri, name, text, { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } });
}

function globSource(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      const slashAfter = glob[i + 2] === "/";
      out += slashAfter ? "(?:.*/)?" : ".*";
      i += slashAfter ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) out += "\\[";
      else {
        out += `[${glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) out += `\\${glob[++i]}`;
    else out += /[.+^${}()|\\/]/.test(c) ? `\\${c}` : c;
  }
  return out;
}

/**
 * A .gitignore's rules as a test of a path relative to its directory (`/` separated): comments,
 * `!` negation, a trailing `/` for directories, a `/` inside for anchoring, `*`, `**`, `?`, `[…]`.
 */
export function gitignoreMatcher(text: string): (path: string) => boolean {
  const rules: { negate: boolean; re: RegExp }[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (!line || line.startsWith("#")) continue;
    const negate = line.startsWith("!");
    if (negate) line = line.slice(1);
    else if (line.startsWith("\\")) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.replace(/\/+$/, "");
    const anchored = line.includes("/");
    line = line.replace(/^\//, "");
    if (!line) continue;
    rules.push({ negate, re: new RegExp(`${anchored ? "^" : "^(?:.*/)?"}${globSource(line)}${dirOnly ? "/.*$" : "(?:/.*)?$"}`) });
  }
  return (path) => {
    let ignored = false;
    for (const rule of rules) if (rule.re.test(path)) ignored = !rule.negate;
    return ignored;
  };
}

/** The `files.exclude` / `search.exclude` patterns that are simply on, as one glob for findFiles. */
export function excludeGlob(...settings: (Record<string, unknown> | undefined)[]): string | undefined {
  const globs = new Set<string>();
  for (const setting of settings) {
    for (const [glob, on] of Object.entries(setting ?? {})) if (on === true && !/[{}]/.test(glob)) globs.add(glob);
  }
  return globs.size ? `{${[...globs].join(",")}}` : undefined;
}

// -- terminal output

/** Terminal output as text: escape sequences out, carriage returns resolved to line ends. */
export function plainTerminalText(data: string): string {
  return data
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
    .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")
    .replace(/\x1b[@-Z\\-_]/g, "")
    .replace(/\r+\n/g, "\n")
    .replace(/\r/g, "");
}

interface Run {
  command: string;
  output: string;
  done: boolean;
}

export interface RunRecorder {
  append(data: string): void;
  /** Its output stream closed: the command has finished. */
  finish(): void;
}

/** The last few commands each terminal ran and what they printed (shell integration's view of it). */
export class TerminalLog<K> {
  private readonly runs = new Map<K, Run[]>();

  constructor(
    private readonly keep = 5,
    private readonly maxChars = 16_000,
  ) {}

  /** A command started; its output is added as it arrives. */
  start(terminal: K, command: string): RunRecorder {
    const run: Run = { command, output: "", done: false };
    const list = [...(this.runs.get(terminal) ?? []), run].slice(-this.keep);
    this.runs.set(terminal, list);
    return {
      append: (data) => {
        run.output = (run.output + plainTerminalText(data)).slice(-this.maxChars);
      },
      finish: () => {
        run.done = true;
      },
    };
  }

  forget(terminal: K): void {
    this.runs.delete(terminal);
  }

  /** How many of the kept commands have finished. */
  finished(terminal: K): number {
    return this.runs.get(terminal)?.filter((r) => r.done).length ?? 0;
  }

  /** Each kept command and its output; one still running says so. */
  text(terminal: K): string | undefined {
    const list = this.runs.get(terminal);
    if (!list?.length) return undefined;
    return list.map((r) => `$ ${r.command}\n${r.output.trimEnd()}${r.done ? "" : "\n(still running)"}`.trimEnd()).join("\n");
  }
}

export function terminalBlock(name: string, text: string): ResourceContent {
  return { type: "resource", uri: `terminal:${encodeURIComponent(name)}`, name, text, mimeType: "text/plain", context: "terminal" };
}

export const NO_TERMINAL_OUTPUT =
  "No terminal output to attach: VS Code shares a terminal's output with extensions only through shell integration, and no command has run in the active terminal with it since agentls started.";
