import assert from "node:assert/strict";
import { test } from "node:test";
import type { HostToPanel } from "../../../webview/src/messages";
import {
  activeBlock,
  diagnosticLine,
  excludeGlob,
  fileBlock,
  fixBlocks,
  fuzzyScore,
  gitignoreMatcher,
  MAX_ATTACH_BYTES,
  mentionItems,
  plainTerminalText,
  problemsBlock,
  rankFiles,
  symbolBlock,
  TerminalLog,
  terminalBlock,
} from "../../src/context";
import { SessionController, type AgentConnection } from "../../src/controller";

const range = (sl: number, sc: number, el: number, ec: number) => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });

test("a diagnostic reads as path:line:col severity: message, 1-based", () => {
  assert.equal(diagnosticLine("src/a.json", { range: range(2, 4, 2, 5), message: "Expected comma", severity: 0, source: "json", code: 514 }), "src/a.json:3:5 error: Expected comma (json 514)");
  assert.equal(diagnosticLine("b.py", { range: range(0, 0, 0, 1), message: "unused", severity: 1 }), "b.py:1:1 warning: unused");
});

test("the problems block lists errors first; no problems, no block", () => {
  const block = problemsBlock("file:///work", [
    ["b.py", [{ range: range(9, 0, 9, 1), message: "style", severity: 3 }]],
    ["a.json", [{ range: range(0, 1, 0, 2), message: "Expected comma", severity: 0 }]],
  ]);
  assert.deepEqual(block, {
    type: "resource",
    uri: "file:///work",
    name: "problems",
    text: "a.json:1:2 error: Expected comma\nb.py:10:1 hint: style",
    mimeType: "text/plain",
    context: "diagnostics",
  });
  assert.equal(problemsBlock("file:///work", [["a.py", []]]), undefined);
});

test("a problem to fix: the diagnostic with its range, and three lines either side as a selection", () => {
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i}`);
  const d = { range: range(1, 2, 1, 6), message: "bad", severity: 0 };
  assert.deepEqual(fixBlocks("file:///w/a.py", "a.py", d, lines), [
    { type: "resource", uri: "file:///w/a.py", name: "a.py", text: "a.py:2:3 error: bad", range: d.range, context: "diagnostics" },
    { type: "resource", uri: "file:///w/a.py", name: "a.py", text: "line 0\nline 1\nline 2\nline 3\nline 4", range: range(0, 0, 5, 0), context: "selection" },
  ]);
});

test("a picked file: its text up to 256 KB, a link when larger or binary", () => {
  const text = new TextEncoder().encode("print('hi')\n");
  assert.deepEqual(fileBlock("file:///w/a.py", "a.py", text.length, () => text), { type: "resource", uri: "file:///w/a.py", name: "a.py", text: "print('hi')\n", context: "file" });
  const link = { type: "resource_link", uri: "file:///w/big.log", name: "big.log", context: "file" };
  let read = false;
  assert.deepEqual(
    fileBlock("file:///w/big.log", "big.log", MAX_ATTACH_BYTES + 1, () => {
      read = true;
      return text;
    }),
    link,
  );
  assert.equal(read, false, "a large file is not read");
  assert.deepEqual(fileBlock("file:///w/img.png", "img.png", 4, () => new Uint8Array([0x89, 0x50, 0, 0x47])), { ...link, uri: "file:///w/img.png", name: "img.png" });
  assert.deepEqual(fileBlock("file:///w/latin1.txt", "latin1.txt", 2, () => new Uint8Array([0xe9, 0x41])).type, "resource_link", "not UTF-8");
});

test("the active editor: its selection as text, or the file by reference", () => {
  assert.deepEqual(activeBlock("file:///w/a.py", "a.py"), { type: "resource_link", uri: "file:///w/a.py", name: "a.py", context: "file" });
  assert.deepEqual(activeBlock("file:///w/a.py", "a.py", { text: "x = 1", range: range(3, 0, 3, 5) }), {
    type: "resource",
    uri: "file:///w/a.py",
    name: "a.py",
    text: "x = 1",
    range: range(3, 0, 3, 5),
    context: "selection",
  });
});

test("fuzzy file match: in order, file names and word starts first", () => {
  assert.equal(fuzzyScore("xyz", "src/app.py"), undefined);
  assert.ok(fuzzyScore("app", "src/app.py")! > fuzzyScore("app", "apps/other/main.py")!);
  const paths = ["docs/parser-notes.md", "src/parser.py", "tests/test_parser.py", "src/server/main.py", "README.md"];
  assert.deepEqual(rankFiles("parser", paths), ["src/parser.py", "docs/parser-notes.md", "tests/test_parser.py"]);
  assert.deepEqual(rankFiles("srvmain", paths), ["src/server/main.py"]);
  assert.deepEqual(rankFiles("", paths, 2), ["README.md", "src/parser.py"]);
});

test(".gitignore rules: names anywhere, anchored paths, directories, globs, negation", () => {
  const ignored = gitignoreMatcher(["# build output", "node_modules/", "/dist", "*.log", "!keep.log", "docs/**/*.tmp", "cache?/", ""].join("\n"));
  const cases: [string, boolean][] = [
    ["node_modules/x/index.js", true],
    ["web/node_modules/y.js", true],
    ["dist/app.js", true],
    ["src/dist/app.js", false],
    ["debug.log", true],
    ["logs/today.log", true],
    ["keep.log", false],
    ["docs/a/b/c.tmp", true],
    ["docs/c.tmp", true],
    ["src/c.tmp", false],
    ["cache1/x", true],
    ["src/app.py", false],
  ];
  for (const [path, want] of cases) assert.equal(ignored(path), want, path);
});

test("files.exclude and search.exclude: the patterns that are on, as one glob", () => {
  assert.equal(excludeGlob({ "**/.git": true, "**/.hg": false, "**/*.js": { when: "$(basename).ts" } }, { "**/node_modules": true, "**/.git": true }), "{**/.git,**/node_modules}");
  assert.equal(excludeGlob({}, undefined), undefined);
});

test("@ offers problems and terminal by their prefix, then the files", () => {
  const files = [{ label: "src/pro.py", uri: "file:///w/src/pro.py" }];
  assert.deepEqual(mentionItems("pro", files, { problems: 2 }), [
    { kind: "problems", label: "problems", detail: "2 in the workspace" },
    { kind: "file", label: "src/pro.py", uri: "file:///w/src/pro.py" },
  ]);
  assert.deepEqual(
    mentionItems("", [], { problems: 0, terminal: "bash" }).map((i) => [i.label, i.detail]),
    [
      ["problems", "none reported"],
      ["terminal", "bash"],
    ],
  );
});

test("terminal output: escape sequences out; the last five commands of each terminal are kept", () => {
  assert.equal(plainTerminalText("\x1b]633;C\x07\x1b[32mok\x1b[0m\r\nnext\r"), "ok\nnext");
  const log = new TerminalLog<string>(5, 20);
  assert.equal(log.text("t1"), undefined);
  for (let i = 1; i <= 6; i++) {
    const run = log.start("t1", `echo ${i}`);
    run.append(`${i}\r\n`);
    run.finish();
  }
  log.start("t2", "yes").append("y\n".repeat(50));
  assert.equal(log.text("t1"), "$ echo 2\n2\n$ echo 3\n3\n$ echo 4\n4\n$ echo 5\n5\n$ echo 6\n6");
  assert.equal(log.finished("t1"), 5);
  assert.equal(log.text("t2"), `$ yes\n${"y\n".repeat(10).trimEnd()}\n(still running)`, "a long output keeps its end");
  assert.equal(log.finished("t2"), 0);
  log.forget("t1");
  assert.equal(log.text("t1"), undefined);
  assert.deepEqual(terminalBlock("bash", "$ ls"), { type: "resource", uri: "terminal:bash", name: "bash", text: "$ ls", mimeType: "text/plain", context: "terminal" });
});

class Conn implements AgentConnection {
  prompts: unknown[] = [];
  async request(method: string, params: any): Promise<any> {
    if (method === "session/new") return { sessionId: "s1", model: "m", modes: { currentModeId: "default", availableModes: [] }, models: { availableModels: [] } };
    if (method === "session/prompt") {
      this.prompts.push(params.prompt);
      return { turnId: "t1", terminal: "completed", stopReason: "end_turn", usage: {} };
    }
    throw new Error(method);
  }
  notify(): void {}
}

test("the controller answers @ queries, attaches picks, reports why not, and sends resource blocks on", async () => {
  const conn = new Conn();
  const posted: HostToPanel[] = [];
  const block = { type: "resource" as const, uri: "file:///w/a.py", name: "a.py", text: "x", context: "file" as const };
  let readied = 0;
  const controller = new SessionController(conn, { post: (m) => posted.push(m) }, {
    cwd: () => "/w",
    settings: () => ({}),
    openFile: () => {},
    openLink: () => {},
    copy: () => {},
    log: () => {},
    panelReady: () => readied++,
    mentions: async (query) => [{ kind: "file", label: `${query}.py`, uri: "file:///w/a.py" }],
    resolveMention: async (item) => (item.kind === "terminal" ? "no output" : [block]),
  });
  await controller.onServerState("ready");
  await controller.handlePanel({ type: "ready" });
  assert.equal(readied, 1);
  await controller.handlePanel({ type: "mentionQuery", query: "a" });
  assert.deepEqual(posted.at(-1), { type: "mentions", query: "a", items: [{ kind: "file", label: "a.py", uri: "file:///w/a.py" }] });
  await controller.handlePanel({ type: "mention", item: { kind: "file", label: "a.py", uri: "file:///w/a.py" } });
  assert.deepEqual(posted.at(-1), { type: "attach", blocks: [block] });
  await controller.handlePanel({ type: "mention", item: { kind: "terminal", label: "terminal" } });
  assert.deepEqual(posted.at(-1), { type: "error", message: "no output" });
  const link = { type: "resource_link" as const, uri: "file:///w/b.py", context: "file" as const };
  await controller.handlePanel({ type: "prompt", prompt: [{ type: "text", text: "explain" }, block, link] });
  assert.deepEqual(conn.prompts, [[{ type: "text", text: "explain" }, block, link]]);
});

test("@ offers the workspace's symbols after the files, and a picked symbol is its lines as a selection", () => {
  const range = { start: { line: 2, character: 4 }, end: { line: 3, character: 40 } };
  const symbols = [{ name: "total", container: "Cart", path: "src/cart.py", uri: "file:///w/src/cart.py", range }];
  const items = mentionItems("tot", [{ label: "src/total.md", uri: "file:///w/src/total.md" }], { problems: 0 }, symbols);
  assert.deepEqual(items.map((i) => [i.kind, i.label, i.detail]), [
    ["file", "src/total.md", undefined],
    ["symbol", "Cart.total", "src/cart.py:3"],
  ]);
  const lines = ["class Cart:", "", "    def total(self):", "        return sum(self.prices)", ""];
  assert.deepEqual(symbolBlock("file:///w/src/cart.py", "cart.py", lines, range), {
    type: "resource",
    uri: "file:///w/src/cart.py",
    name: "cart.py",
    text: "    def total(self):\n        return sum(self.prices)",
    range: { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } },
    context: "selection",
  });
});

