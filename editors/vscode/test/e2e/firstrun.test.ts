// First run in a real VS Code with no model to talk to: the panel says so in words and offers a
// key or the local model; a key entered there is kept in secret storage (not settings.json),
// reaches the restarted server's environment, and the next turn is answered with it.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, EDITORS, openWorkbench, panelFrame, REPO, sandbox, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-firstrun");
const KEY = "sk-ant-e2e-first-run";

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;
let model: ChildProcess | undefined;

/** The loopback fake model on the Anthropic wire, refusing any key but KEY (401). */
async function fakeModel(): Promise<string> {
  const script = join(box.root, "model-replies.json");
  writeFileSync(script, JSON.stringify([{ text: "Hello from the model your key opened." }]));
  const python = process.env.AGENTLS_BIN_DIR ? join(process.env.AGENTLS_BIN_DIR, "python") : join(REPO, ".venv", "bin", "python");
  model = spawn(python, ["-m", "server.testing.fake_llm", "--script", script, "--api-key", KEY], { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: model!.stdout! }).once("line", resolve);
    model!.once("exit", (code) => reject(new Error(`the fake model exited (${code})`)));
  });
  return first.trim();
}

before(async () => {
  box = sandbox([]);
  box.env.AGENTLS_PROVIDER = "anthropic"; // and no key anywhere: session/new is refused
  box.env.ANTHROPIC_BASE_URL = await fakeModel();
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
  model?.kill();
  await closeWorkbench(wb, box, ARTIFACTS);
});

async function snap(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator(".part.sidebar").screenshot({ path: join(ARTIFACTS, name) });
}

test("with no key and no model the panel says so and offers to set one up", async () => {
  await page.locator(".activitybar .action-item a[aria-label^='agentls']").click();
  panel = panelFrame(page);
  const card = panel.getByRole("region", { name: "Set up a model" });
  await card.waitFor();
  assert.match(await card.innerText(), /agentls needs a model to talk to/);
  assert.doesNotMatch(await card.locator(".setup-text").innerText(), /--provider|llm\.provider/);
  assert.equal(await panel.locator("#status").innerText(), "No model set up");
  assert.ok(await panel.getByRole("button", { name: "Send" }).isDisabled());
  assert.ok(await card.getByRole("button", { name: /Use the embedded local model/ }).isVisible());
  await snap("first-run.png");
});
