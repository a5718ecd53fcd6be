// End to end in a real VS Code: the packaged extension in code-server, driven in Chromium like a
// user would, talking to the real `agentls serve` (the scripted model plays replies.json).
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, descendants, EDITORS, openChat, openWorkbench, resizeSidebar, sandbox, sendPrompt, snapSidebar, type CodeServer, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e");
const QUESTION = "Which color should the banner use?";
const SIZE_QUESTION = "How big should the banner be?";
const LATE_QUESTION = "Tabs or spaces?";
/** The unanswered question's own timeout (the tool's timeoutMs): short, as it is waited out. */
const QUESTION_TIMEOUT_MS = 5000;
const COUNT = Array.from({ length: 120 }, (_, i) => `${i + 1},`).join(" ");

const PLAN = [
  { id: "1", content: "Read the README", status: "completed" },
  { id: "2", content: "Ask which color and size", status: "completed" },
  { id: "3", content: "Save the color to choice.txt", status: "in_progress" },
  { id: "4", content: "Show how to print it", status: "pending" },
];

/** What the scripted model says, one entry per model call, in order. */
const SCRIPT = [
  { text: "I'll **read** the README first.", toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }], delay: 0.02 },
  {
    text: "One question before I write anything.",
    toolCalls: [{ name: "ask_user_question", arguments: { questions: [{ question: QUESTION, header: "Color", options: [{ label: "Red", description: "warm and loud" }, { label: "Blue", description: "calm" }], multiSelect: false }, { question: SIZE_QUESTION, header: "Size", options: [{ label: "Small" }, { label: "Large" }], multiSelect: false }] } }],
  },
  {
    text: "Writing your choice down.",
    toolCalls: [
      { name: "todo_write", arguments: { todos: PLAN } },
      { name: "write_file", arguments: { path: "choice.txt", content: "Blue\n" } },
    ],
  },
  { text: "Saved `choice.txt`:\n\n```python\nprint('blue')\n```\n\nAnything else?" },
  { text: `Counting slowly: ${COUNT}`, delay: 0.25 },
  { text: "Writing it down.", toolCalls: [{ name: "write_file", arguments: { path: "late.txt", content: "late\n" } }] },
  { text: "I did not write late.txt: nobody answered." },
  {
    text: "A quick question first.",
    toolCalls: [{ name: "ask_user_question", arguments: { questions: [{ question: LATE_QUESTION, header: "Indent", options: [{ label: "Tabs" }, { label: "Spaces" }], multiSelect: false }], timeoutMs: QUESTION_TIMEOUT_MS } }],
  },
  { text: "No answer, so spaces it is." },
];
/** The server's approval timeout here: long enough to click, short enough to wait out. */
const APPROVAL_TIMEOUT_S = 30;

let box: Sandbox;
const wb: Partial<Workbench> = {};
let server: CodeServer;
let page: Page;
let panel: FrameLocator;

before(async () => {
  box = sandbox(SCRIPT);
  writeFileSync(join(box.workspace, "README.md"), "# Demo project\n\nA banner that needs a color.\n");
  writeFileSync(join(box.workspace, "choice.txt"), "Red\n");
  mkdirSync(join(box.root, "config", "agentls"), { recursive: true });
  writeFileSync(join(box.root, "config", "agentls", "config.json"), JSON.stringify({ permissions: { approvalTimeout: APPROVAL_TIMEOUT_S } }));
  ({ server, page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

test("the activity bar opens the agentls chat, which starts a session on the real server", async () => {
  panel = await openChat(page);
  // A wider side bar, as a user would drag it, for a readable screenshot.
  await resizeSidebar(page, 480);
  assert.equal(await panel.getByLabel("Model").inputValue(), "scripted");
});

test("a prompt streams text and a tool card; the question and the permission are answered by clicking", async () => {
  await sendPrompt(panel, "Please look at the README and save a banner color.");
  assert.equal(await panel.locator("[data-kind=user] .bubble").first().innerText(), "Please look at the README and save a banner color.");
  await panel.locator("[data-kind=text] strong").getByText("read").waitFor();
  const read = panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "read_file" }) });
  await read.locator("[data-status=completed], .status-completed").first().waitFor().catch(() => undefined);
  await panel.locator(".tool[data-status=completed] .tool-name", { hasText: "read_file" }).waitFor();
  assert.equal(await read.locator(".tool-title").innerText(), "Read README.md");

  // session/ask_question → a QuickPick in the workbench, one step per question (VS Code adds the step count to the title, once)
  const quickPick = page.locator(".quick-input-widget");
  await quickPick.getByText(QUESTION).first().waitFor();
  assert.equal((await quickPick.locator(".quick-input-title").innerText()).trim(), "Color: Which color should the banner use? (1/2)");
  const rows = quickPick.locator(".monaco-list-row");
  assert.deepEqual(await rows.locator(".label-name").allInnerTexts(), ["Red", "Blue", "Other…"]);
  assert.deepEqual(await rows.locator(".label-description").allInnerTexts(), ["warm and loud", "calm", "type your own answer"]);
  await rows.filter({ hasText: "Blue" }).click();
  await quickPick.locator(".quick-input-title", { hasText: SIZE_QUESTION }).waitFor();
  assert.equal((await quickPick.locator(".quick-input-title").innerText()).trim(), "Size: How big should the banner be? (2/2)");
  await snapSidebar(page, ARTIFACTS, "question-step-2.png");
  await rows.filter({ hasText: "Large" }).click();
  const ask = panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "ask_user_question" }) });
  await ask.and(panel.locator("[data-status=completed]")).waitFor();
  assert.match((await ask.locator("pre.output").textContent())!, /The user answered:\s+- Which color should the banner use\? → Blue\s+- How big should the banner be\? → Large/);

  // session/request_permission → asked inline on the write_file card, with what will be written
  const permission = panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "write_file" }) }).locator(".ask");
  await permission.waitFor();
  assert.equal(await permission.getByRole("heading").innerText(), "Allow the agent to write choice.txt?");
  assert.deepEqual(await permission.locator(".diff-line").allInnerTexts(), ["-Red", "+Blue"]);
  // The plan is shown, and pinned while it has steps left.
  const plan = panel.locator("[data-kind=plan]");
  assert.equal(await plan.locator(".label").textContent(), "Plan · 2/4");
  assert.ok(await plan.evaluate((el) => el.classList.contains("pinned")));
  assert.deepEqual(await permission.locator(".ask-options button").allInnerTexts(), ["Allow once", "Always allow", "Reject", "Always reject"]);
  assert.equal(await page.locator(".monaco-dialog-box").count(), 0, "no modal dialog");
  const shot = await snapSidebar(page, ARTIFACTS, "panel-permission.png");
  // The README's screenshot: mid-turn, tool cards, the plan and a permission asked inline with its diff.
  if (process.env.UPDATE_SCREENSHOT) copyFileSync(shot, join(EDITORS, "vscode", "media", "screenshot.png"));
  await permission.getByRole("button", { name: "Allow once" }).click();
  const write = panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "write_file" }) });
  await write.and(panel.locator("[data-status=completed]")).waitFor();
  assert.match(await write.locator(".diff").innerText(), /\+\s*Blue/);
  assert.equal(await write.locator(".diff-head a.file").innerText(), "choice.txt");
  assert.match(await write.locator(".permission").innerText(), /allowed once/);
  assert.equal(readFileSync(join(box.workspace, "choice.txt"), "utf8"), "Blue\n", "the permission answer reached the agent: the file was written");

  await panel.locator("[data-kind=turn][data-terminal=completed]").waitFor();
  assert.match(await panel.locator("[data-kind=text]").last().innerText(), /Saved choice\.txt:[\s\S]*print\('blue'\)[\s\S]*Anything else\?/);
  assert.equal(await panel.locator(".code-block code.lang-python .tok-str").innerText(), "'blue'");
});

test("a running turn is cancelled from the panel (screenshot mid-turn)", async () => {
  await sendPrompt(panel, "Count to a hundred and twenty, slowly.");
  const text = panel.locator("[data-kind=text]").last();
  await text.getByText(/Counting slowly: 1, 2, 3, 4, 5,/).waitFor();
  await snapSidebar(page, ARTIFACTS, "panel-mid-turn.png");
  const stop = panel.getByRole("button", { name: "Stop the running turn" });
  await stop.waitFor();
  await stop.click();
  await panel.locator("[data-kind=turn][data-terminal=aborted]").waitFor();
  assert.doesNotMatch(await text.innerText(), /120,/, "the reply stopped streaming");
  assert.ok(await panel.getByRole("button", { name: "Send" }).isVisible());
});

test("a permission request nobody answers is withdrawn from the panel when the server gives up", async () => {
  await sendPrompt(panel, "Write late.txt.");
  const card = panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "write_file" }) }).last();
  const ask = card.locator(".ask");
  await ask.waitFor();
  await ask.waitFor({ state: "detached", timeout: (APPROVAL_TIMEOUT_S + 60) * 1000 });
  await card.and(panel.locator("[data-status=denied]")).waitFor();
  await panel.locator("[data-kind=turn]").last().and(panel.locator("[data-terminal=completed]")).waitFor();
  if ((await card.locator("details").getAttribute("open")) === null) await card.locator("summary").click();
  assert.equal(await card.locator(".denied-text").innerText(), "No answer in time; the call was not run.");
  assert.equal(await card.getByRole("button", { name: "Allow once" }).count(), 0, "nothing left to click that would do nothing");
  assert.ok(!existsSync(join(box.workspace, "late.txt")));
  await snapSidebar(page, ARTIFACTS, "panel-permission-withdrawn.png");
});

test("a question nobody answers closes its picker when the server gives up, and the user is told, as the panel says", async () => {
  await sendPrompt(panel, "Ask me about indentation.");
  const quickPick = page.locator(".quick-input-widget");
  await quickPick.locator(".quick-input-title", { hasText: LATE_QUESTION }).waitFor();
  await quickPick.waitFor({ state: "hidden" });
  const note = panel.locator("[data-kind=note]", { hasText: "No answer in time" }).last();
  await note.waitFor();
  const said = await note.innerText();
  await page.locator(".notifications-toasts").getByText(said.trim()).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, "question-timed-out.png") });
  await panel.locator("[data-kind=turn]").last().and(panel.locator("[data-terminal=completed]")).waitFor();
});

test("the server is restarted when it dies, and the user is told", async () => {
  const agentls = descendants(server.process.pid!).filter((p) => /agentls|server\.cli/.test(p.cmdline) && /\bserve\b/.test(p.cmdline) && !/code-server|entry\.js/.test(p.cmdline));
  assert.equal(agentls.length, 1, `one agentls server below code-server: ${JSON.stringify(agentls)}`);
  process.kill(agentls[0].pid, "SIGKILL");
  await page.locator(".notifications-toasts").getByText("The agentls server stopped unexpectedly; restarting it.").waitFor();
  await panel.locator("#status").getByText("default mode").waitFor();
  const after = descendants(server.process.pid!).filter((p) => /\bserve\b/.test(p.cmdline) && /agentls|server\.cli/.test(p.cmdline) && !/code-server|entry\.js/.test(p.cmdline));
  assert.equal(after.length, 1);
  assert.notEqual(after[0].pid, agentls[0].pid);
  // "default mode" may still be the old session's label: the fresh session is an empty transcript.
  await panel.locator("[data-kind]").first().waitFor({ state: "detached" });
  assert.equal(await panel.locator("[data-kind]").count(), 0, "a fresh session after the restart");
});

test("earlier sessions are listed, searched and resumed from the panel", async () => {
  await panel.getByRole("button", { name: "Sessions" }).click();
  const dialog = panel.getByRole("dialog", { name: "Sessions" });
  const first = dialog.locator(".session-row", { hasText: "Please look at the README and save a banner color." });
  await first.waitFor();
  await dialog.getByLabel("Search sessions").fill("banner");
  await dialog.locator(".session-row mark").first().waitFor();
  assert.match((await dialog.locator(".session-row mark").allInnerTexts()).join(" ").toLowerCase(), /banner/);
  await dialog.locator(".session-row").first().click();
  await panel.locator("[data-kind=note]", { hasText: "Resumed session." }).waitFor();
  await panel.locator("[data-kind=user] .bubble", { hasText: "Please look at the README and save a banner color." }).waitFor();
  assert.ok(await dialog.isHidden());
  await panel.locator(".tool", { has: panel.locator(".tool-name", { hasText: "write_file" }) }).first().waitFor();
  await snapSidebar(page, ARTIFACTS, "panel-resumed.png");
});
