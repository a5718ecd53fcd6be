// First run in a real VS Code with no model to talk to: the panel says so in words and offers a
// key or the local model; a key entered there is kept in VS Code's secret storage (not
// settings.json), reaches the restarted server's environment, and the next turn is answered by
// the loopback fake model, which refuses any other key.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import {
  closeWorkbench,
  descendants,
  EDITORS,
  extensionLogs,
  openChat,
  openWorkbench,
  recordingModel,
  sendPrompt,
  snapSidebar,
  sandbox,
  type RecordingModel,
  type Sandbox,
  type Workbench,
} from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-firstrun");
const KEY = "sk-e2e-first-run-7f3a";

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;
let model: RecordingModel | undefined;

before(async () => {
  box = sandbox([]);
  model = await recordingModel({ apiKey: KEY });
  box.env.AGENTLS_PROVIDER = "openai"; // and no key anywhere: session/new is refused
  box.env.OPENAI_BASE_URL = model.baseUrl;
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
  model?.stop();
  await closeWorkbench(wb, box, ARTIFACTS);
});

test("with no key and no model the panel says so and offers to set one up", async () => {
  panel = await openChat(page, { ready: false });
  const card = panel.getByRole("region", { name: "Set up a model" });
  await card.waitFor();
  assert.match(await card.innerText(), /agentls needs a model to talk to/);
  assert.doesNotMatch(await card.locator(".setup-text").innerText(), /--provider|llm\.provider/);
  assert.equal(await panel.locator("#status").innerText(), "No model set up");
  assert.ok(await panel.getByRole("button", { name: "Send" }).isDisabled());
  assert.ok(await card.getByRole("button", { name: /Use the embedded local model/ }).isVisible());
  await snapSidebar(page, ARTIFACTS, "first-run.png");
  // + asks the server again: a fresh card (the server refused once more), still in words.
  await card.evaluate((el) => el.setAttribute("data-seen", ""));
  await panel.getByRole("button", { name: "New session" }).click();
  const again = panel.locator(".setup:not([data-seen])");
  await again.waitFor();
  assert.doesNotMatch(await again.locator(".setup-text").innerText(), /--provider|llm\.provider/);
  assert.equal(await panel.locator("#status").innerText(), "No model set up");
});

test("a key entered in the panel goes to secret storage and the server's environment, never settings.json; the next turn is answered with it", async () => {
  await panel.getByRole("button", { name: "Enter an API key…" }).click();
  const quick = page.locator(".quick-input-widget");
  await quick.locator(".quick-input-title", { hasText: "agentls: API key" }).waitFor();
  await quick.locator(".monaco-list-row", { has: page.locator(".label-name", { hasText: /^OpenAI$/ }) }).click();
  await quick.locator(".quick-input-title", { hasText: "agentls: OpenAI API key" }).waitFor();
  const input = quick.locator("input[type=password]");
  await input.fill(KEY);
  await snapSidebar(page, ARTIFACTS, "first-run-key.png");
  await input.press("Enter");
  await panel.locator("#status").getByText("default mode").waitFor();
  assert.equal(await panel.getByRole("region", { name: "Set up a model" }).count(), 0, "the first-run card is gone");

  const servers = descendants(wb.server!.process.pid!).filter((p) => /\bserve\b/.test(p.cmdline) && /agentls|server\.cli/.test(p.cmdline) && !/code-server|entry\.js/.test(p.cmdline));
  assert.equal(servers.length, 1, JSON.stringify(servers));
  const environ = readFileSync(`/proc/${servers[0].pid}/environ`, "utf8").split("\0");
  const passed = environ.filter((v) => v.startsWith("OPENAI_API_KEY="));
  assert.deepEqual(passed, [`OPENAI_API_KEY=${KEY}`], "the server runs with the key in its environment");
  await sendPrompt(panel, "Hello, can you hear me?");
  await panel.locator("[data-kind=turn][data-terminal]").waitFor();
  assert.equal(await panel.locator("[data-kind=turn]").getAttribute("data-terminal"), "completed");
  assert.equal(await panel.locator("[data-kind=text]").last().innerText(), "Noted.");
  await model!.request((r) => JSON.stringify(r.body).includes("Hello, can you hear me?"), "with the prompt");
  assert.deepEqual([...new Set(model!.requests.map((r) => r.key))], [KEY], "the model got the key the user entered");

  assert.ok(!readFileSync(join(box.userDataDir, "User", "settings.json"), "utf8").includes(KEY), "settings.json does not hold the key");
  for (const log of extensionLogs(box)) assert.ok(!readFileSync(log, "utf8").includes(KEY), `${log} does not hold the key`);
  await snapSidebar(page, ARTIFACTS, "first-run-key-answered.png");
});
