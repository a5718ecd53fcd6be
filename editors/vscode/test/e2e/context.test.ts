// Editor context end to end in code-server: lines selected in the editor and added with the
// keybinding, a file picked with `@`, and `@problems` with a real diagnostic (VS Code's built-in
// JSON language features on a file with a syntax error) reach the model. The loopback fake model
// (recording_model.py) prints every request it gets; the test reads what the model was sent.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, codeServerEntry, EDITORS, openChat, openWorkbench, recordingModel, runCommand, sandbox, snapSidebar, type RecordingModel, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-context");
const APP = ["import sys", "", "def total(items):", "    return sum(item.price for item in items)", "", "def main():", "    print(total([]))", ""].join("\n");
const NOTES = "# Parser notes\n\nThe parser reads one token ahead (NOTES-MARKER-7).\n";

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;
let model: RecordingModel | undefined;

/** Every string in a request body, joined: what the model read, whatever the wire's shape. */
function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(textOf).join("\n");
  if (value && typeof value === "object") return Object.values(value).map(textOf).join("\n");
  return "";
}

/** The text of the first model request that holds `marker` (the prompt's own words). */
async function sentToModel(marker: string): Promise<string> {
  return textOf((await model!.request((r) => textOf(r.body).includes(marker), `holding ${JSON.stringify(marker)}`)).body);
}

before(async () => {
  box = sandbox([]);
  mkdirSync(join(box.workspace, "src"));
  mkdirSync(join(box.workspace, "notes"));
  mkdirSync(join(box.workspace, "ignored"));
  writeFileSync(join(box.workspace, "src", "app.py"), APP);
  writeFileSync(join(box.workspace, "notes", "parser_notes.md"), NOTES);
  writeFileSync(join(box.workspace, "ignored", "parser_notes_old.md"), "ignored\n");
  writeFileSync(join(box.workspace, ".gitignore"), "ignored/\n");
  writeFileSync(join(box.workspace, "bad.json"), '{\n  "name": "demo"\n  "version": 1\n}\n');
  box.env.SHELL = "/bin/bash"; // a shell with VS Code's shell integration
  box.env.AGENTLS_PROVIDER = "anthropic";
  box.env.ANTHROPIC_API_KEY = "sk-ant-e2e-context";
  model = await recordingModel();
  box.env.ANTHROPIC_BASE_URL = model.baseUrl;
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
  model?.stop();
  await closeWorkbench(wb, box, ARTIFACTS);
});

async function openFile(name: string, shows: string): Promise<void> {
  await page.locator(".monaco-workbench").click({ position: { x: 640, y: 400 } });
  await page.keyboard.press("Control+P");
  const quick = page.locator(".quick-input-widget");
  await quick.locator("input").fill(name);
  // The row Enter opens: the list filters after the input changes.
  await quick.locator(".monaco-list-row.focused", { hasText: name }).waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".editor-instance .view-lines", { hasText: shows }).waitFor();
}

async function ask(text: string, mention?: string): Promise<void> {
  const input = panel.getByLabel("Message to the agent");
  await input.click();
  await input.fill(text);
  if (mention) await input.pressSequentially(mention);
}

let turns = 0;

/** The turn just started has ended (each test runs one). */
async function turnDone(): Promise<void> {
  await panel.locator("[data-kind=turn][data-terminal=completed]").nth(turns++).waitFor();
}

test("selected lines added with Ctrl+Alt+K reach the model with their path, lines and text", { timeout: 600_000 }, async () => {
  panel = await openChat(page);
  await openFile("app.py", "def total(items):");
  // Lines 3-4 (1-based): from the start of line 3 to the start of line 5.
  await page.locator(".editor-instance .view-line", { hasText: "def total(items):" }).click();
  await page.keyboard.press("Home");
  await page.keyboard.press("Shift+ArrowDown");
  await page.keyboard.press("Shift+ArrowDown");
  await page.keyboard.press("Control+Alt+K");
  const chip = panel.locator("#context-chips .chip-label");
  await chip.getByText("@src/app.py:3-4 (selection)").waitFor();
  await ask("What do the selected lines compute?");
  await panel.getByLabel("Message to the agent").press("Enter");
  await turnDone();
  const sent = await sentToModel("What do the selected lines compute?");
  assert.ok(sent.includes('<context kind="selection" path="src/app.py" lines="3-4">'), sent);
  assert.ok(sent.includes("def total(items):\n    return sum(item.price for item in items)\n"), sent);
  assert.ok(!sent.includes("def main():"), "only the selected lines are sent");
  assert.match(await panel.locator("[data-kind=user] .bubble").first().innerText(), /What do the selected lines compute\?\n@src\/app\.py:3-4 \(selection\)/);
});

test("@ completes workspace files (not what .gitignore ignores); the picked file's text reaches the model", { timeout: 600_000 }, async () => {
  await ask("Summarize ", "@parsernotes");
  const options = panel.getByRole("listbox", { name: "Mentions" }).getByRole("option");
  await options.filter({ hasText: "@notes/parser_notes.md" }).waitFor();
  const labels = await options.locator(".label").allInnerTexts();
  assert.ok(!labels.some((l) => l.includes("ignored/")), `ignored files are not offered: ${labels.join(", ")}`);
  const input = panel.getByLabel("Message to the agent");
  for (let i = 0; i < labels.indexOf("@notes/parser_notes.md"); i++) await input.press("ArrowDown");
  await input.press("Enter");
  await panel.locator("#context-chips .chip-label").getByText("@notes/parser_notes.md").waitFor();
  assert.equal(await input.inputValue(), "Summarize ");
  await input.press("Enter");
  await turnDone();
  const sent = await sentToModel("NOTES-MARKER-7");
  assert.ok(sent.includes('<context kind="file" path="notes/parser_notes.md">'), sent);
  assert.ok(sent.includes(NOTES.trimEnd()), sent);
});

test("@problems sends the JSON language features' real diagnostic for a file with a syntax error", { timeout: 600_000 }, async () => {
  await openFile("bad.json", '"name": "demo"');
  await page.locator(".editor-instance .squiggly-error").first().waitFor();
  await ask("Why is this config broken? ", "@problems");
  const option = panel.getByRole("listbox", { name: "Mentions" }).locator("[data-kind=problems]");
  await option.waitFor();
  assert.match(await option.innerText(), /\d+ in the workspace/);
  await panel.getByLabel("Message to the agent").press("Enter");
  await panel.locator("#context-chips .chip-label").getByText("@problems (diagnostics)").waitFor();
  await panel.getByLabel("Message to the agent").press("Enter");
  await turnDone();
  const sent = await sentToModel("Why is this config broken?");
  assert.match(sent, /<context kind="diagnostics" path="[^"]*">\n(?:.*\n)*bad\.json:3:3 error: Expected comma/, sent);
  await snapSidebar(page, ARTIFACTS, "context.png");
});

test("the editor's context menu adds the selection too; its chip can be removed", { timeout: 600_000 }, async () => {
  await openFile("app.py", "def main():");
  const line = page.locator(".editor-instance .view-line", { hasText: "def main():" });
  await line.click();
  await page.keyboard.press("Home");
  await page.keyboard.press("Shift+End");
  await page.keyboard.press("Shift+F10"); // the context menu, at the cursor: a click could move it
  // Keys, not a click: a click while the menu is still being placed can close it unchosen.
  await page.getByRole("menuitem", { name: "Add Selection to agentls" }).waitFor();
  const focused = page.locator(".monaco-menu .action-item.focused", { hasText: "Add Selection to agentls" });
  for (let i = 0; !(await focused.count()); i++) {
    assert.ok(i < 60, "the context menu has no 'Add Selection to agentls' to move to");
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  const chip = panel.locator("#context-chips .chip", { hasText: "@src/app.py:6 (selection)" });
  await chip.waitFor();
  await chip.getByRole("button", { name: "Remove @src/app.py:6 (selection)" }).click();
  await chip.waitFor({ state: "detached" });
});

test("'Fix with agentls' on a diagnostic sends the problem, its range and the lines around it", { timeout: 600_000 }, async () => {
  await openFile("bad.json", '"name": "demo"');
  await page.locator(".editor-instance .view-line", { hasText: '"version": 1' }).click();
  await page.keyboard.press("Home");
  await page.keyboard.press("Control+.");
  const widget = page.locator(".action-widget");
  await widget.getByText("Fix with agentls").waitFor();
  for (let i = 0; !(await widget.locator(".monaco-list-row.focused", { hasText: "Fix with agentls" }).count()); i++) {
    assert.ok(i < 20, "the quick fix list has no 'Fix with agentls' to move to");
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await turnDone();
  const sent = await sentToModel("Fix this problem.");
  assert.match(sent, /<context kind="diagnostics" path="bad\.json" lines="3">\nbad\.json:3:3 error: Expected comma/, sent);
  assert.ok(sent.includes('<context kind="selection" path="bad.json" lines="1-5">\n{\n  "name": "demo"\n  "version": 1\n}\n'), sent);
});

test("with agentls.sendActiveEditor on, the active file goes with each prompt as a chip", { timeout: 600_000 }, async () => {
  await openFile("app.py", "def main():");
  await runCommand(page, "agentls: Toggle Sending the Active Editor with Prompts");
  await panel.locator("#context-chips .chip.auto", { hasText: "@src/app.py" }).waitFor();
  await ask("Anything to improve here?");
  await panel.getByLabel("Message to the agent").press("Enter");
  await turnDone();
  const sent = await sentToModel("Anything to improve here?");
  assert.match(sent, /<context kind="(file|selection)" path="src\/app\.py"/, sent);
  assert.equal(await panel.locator("#context-chips .chip.auto").count(), 1, "the chip stays for the next prompt");
});

test("@terminal sends the output of a command run in the terminal (shell integration)", { timeout: 600_000 }, async (t) => {
  // code-server's terminals need its node-pty built; scripts/test-editors does not build it yet.
  const pty = resolve(codeServerEntry(), "..", "..", "..", "lib", "vscode", "node_modules", "node-pty", "build", "Release", "pty.node");
  if (!existsSync(pty)) return t.skip(`no terminals in this code-server: ${pty} is not built`);
  await page.locator(".editor-instance .view-lines").first().click();
  await page.keyboard.press("Control+Backquote");
  await page.locator(".terminal-wrapper .xterm").first().waitFor();
  await page.locator(".terminal-wrapper .xterm").first().click();
  // VS Code streams a command's output to extensions from a moment after it starts: the output
  // of an echo that is the terminal's first command was seen missing; a second later it is there.
  await page.keyboard.type("sleep 1; echo TERMINAL-MARKER-$((6*7))");
  await page.keyboard.press("Enter");
  const input = panel.getByLabel("Message to the agent");
  const option = panel.getByRole("listbox", { name: "Mentions" }).locator("[data-kind=terminal]");
  // The extension sees the command once shell integration reports it finished: ask again until then.
  for (let i = 0; ; i++) {
    await ask("What did the terminal print? ", "@terminal");
    await option.waitFor();
    if (/: the last/.test(await option.innerText())) break;
    assert.ok(i < 240, "shell integration reported no command in the terminal");
    await input.fill("");
    await new Promise((r) => setTimeout(r, 500));
  }
  await input.press("Enter");
  await panel.locator("#context-chips .chip[data-context=terminal]").waitFor();
  await input.press("Enter");
  await turnDone();
  const sent = await sentToModel("What did the terminal print?");
  assert.match(sent, /<context kind="terminal" path="terminal:[^"]*">\n(?:.*\n)*\$ sleep 1; echo TERMINAL-MARKER-\$\(\(6\*7\)\)\n(?:.*\n)*TERMINAL-MARKER-42/, sent);
});
