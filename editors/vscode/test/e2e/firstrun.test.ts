// First run in a real VS Code with no model to talk to: the panel says so in words and offers a
// key or the local model.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, EDITORS, openWorkbench, panelFrame, sandbox, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-firstrun");

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;

before(async () => {
  box = sandbox([]);
  box.env.AGENTLS_PROVIDER = "anthropic"; // and no key anywhere: session/new is refused
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
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
