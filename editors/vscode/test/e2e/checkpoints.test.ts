// Proposed edits reviewed in VS Code's diff view, and turns undone from the panel, end to end in
// code-server against the real `agentls serve` (the scripted model plays SCRIPT).
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, EDITORS, openChat, openWorkbench, sandbox, sendPrompt, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-checkpoints");
const B = "line one\r\nline two\r\n"; // CRLF must come back byte for byte

const edit = (path: string, old_string: string, new_string: string) => ({ name: "edit_file", arguments: { path, old_string, new_string } });
const SCRIPT = [
  { text: "Changing a.py.", toolCalls: [edit("a.py", "x = 1", "x = 2")] },
  { text: "Done." },
  { toolCalls: [edit("b.txt", "line two", "line 2")] },
  { toolCalls: [{ name: "write_file", arguments: { path: "c.md", content: "# new\n" } }] },
  { text: "Changed b.txt and made c.md." },
  { toolCalls: [edit("a.py", "x = 3", "x = 4")] },
  { text: "Changed a.py again." },
];

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;

before(async () => {
  box = sandbox(SCRIPT);
  writeFileSync(join(box.workspace, "a.py"), "x = 1\n");
  writeFileSync(join(box.workspace, "b.txt"), B);
  ({ page } = await openWorkbench(box, VSIX, wb));
  panel = await openChat(page);
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

let turns = 0;
async function turnDone(): Promise<void> {
  await panel.locator("[data-kind=turn][data-terminal=completed]").nth(turns++).waitFor();
}

let allowed = 1; // the first test's, in the diff editor
/** Allow the next open permission request on its card, and wait for its call to have run. */
async function allowNext(): Promise<void> {
  const ask = panel.locator(".ask").first();
  await ask.waitFor();
  await ask.getByRole("button", { name: "Allow once" }).click();
  await panel.locator(".tool .permission", { hasText: "allowed once" }).nth(allowed++).waitFor();
}

test("an edit opens in the diff editor, is changed there, accepted, and the changed text is on disk", { timeout: 600_000 }, async () => {
  await sendPrompt(panel, "Set x in a.py.");
  const ask = panel.locator(".ask");
  await ask.waitFor();
  assert.match(await ask.locator(".diff").innerText(), /x = 2/, "the card shows the proposal");
  await ask.getByRole("button", { name: "Review in editor…" }).click();

  const diff = page.locator(".monaco-diff-editor");
  await diff.waitFor();
  const right = diff.locator(".editor.modified");
  await right.locator(".view-lines", { hasText: "x = 2" }).waitFor();
  await right.locator(".view-lines").click();
  await page.keyboard.press("Control+A");
  await page.keyboard.type("x = 3");
  await right.locator(".view-lines", { hasText: "x = 3" }).waitFor();
  await page.locator(".editor-actions [aria-label^='Accept Proposed Change']").first().click();

  await turnDone();
  assert.equal(readFileSync(join(box.workspace, "a.py"), "utf8"), "x = 3");
  await diff.waitFor({ state: "detached" });
  assert.match(await panel.locator(".tool").first().locator(".permission").innerText(), /allowed once/);
  await panel.locator("[data-kind=checkpoint]").first().waitFor();
});

test("two turns change three files; rewinding to the first restores all three byte for byte and opens the branch", { timeout: 600_000 }, async () => {
  await sendPrompt(panel, "Change b.txt and make c.md.");
  await allowNext();
  await allowNext();
  await turnDone();
  await sendPrompt(panel, "Change a.py once more.");
  await allowNext();
  await turnDone();
  assert.equal(readFileSync(join(box.workspace, "a.py"), "utf8"), "x = 4");
  assert.equal(readFileSync(join(box.workspace, "b.txt"), "utf8"), "line one\r\nline 2\r\n");
  assert.ok(existsSync(join(box.workspace, "c.md")));

  const offers = panel.locator("[data-kind=checkpoint]");
  assert.equal(await offers.count(), 3, "each turn that changed files offers a rewind");
  await offers.nth(1).getByRole("button", { name: "Rewind to before this turn…" }).click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /restore b\.txt[\s\S]*restore a\.py[\s\S]*delete c\.md/);
  await dialog.getByRole("button", { name: "Restore Files and Conversation" }).click();

  await panel.locator("[data-kind=note]", { hasText: "Resumed session." }).waitFor();
  assert.equal(readFileSync(join(box.workspace, "a.py"), "utf8"), "x = 3", "as the first turn left it");
  assert.equal(readFileSync(join(box.workspace, "b.txt"), "utf8"), B);
  assert.ok(!existsSync(join(box.workspace, "c.md")), "the file the turn made is gone");
  // The branch holds the conversation before the rewound turn: the first turn only.
  await panel.locator("[data-kind=user]").first().waitFor();
  assert.deepEqual(await panel.locator("[data-kind=user] .bubble").allInnerTexts(), ["Set x in a.py."]);
  assert.match(await panel.locator("[data-kind=text]").last().innerText(), /Done\./);
});
