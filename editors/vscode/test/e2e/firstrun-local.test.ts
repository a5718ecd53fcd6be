// First run in a real VS Code, choosing the embedded local model in the panel: the extension runs
// the server's own `agentls setup-local` (here the model is already in the venv, so it says so
// and installs nothing), says the outcome in a notification, and restarts the server on the
// local model. The card is shown because a cloud provider is chosen with no key for it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { closeWorkbench, descendants, EDITORS, openChat, openWorkbench, snapSidebar, sandbox, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-firstrun-local");

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;

before(async () => {
  box = sandbox([]);
  box.env.AGENTLS_PROVIDER = "anthropic"; // and no key anywhere: session/new is refused
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

test("'Use the embedded local model' runs setup-local, says how it went, and the next session runs on the local model", async () => {
  const panel = await openChat(page, { ready: false });
  const card = panel.getByRole("region", { name: "Set up a model" });
  await card.getByRole("button", { name: "Use the embedded local model" }).click();
  await page.locator(".notifications-toasts").getByText("agentls: the embedded local model is already installed.").waitFor();
  await panel.locator("#status").getByText("default mode").waitFor();
  assert.equal(await card.count(), 0, "the first-run card is gone");
  assert.equal(await panel.getByLabel("Model").inputValue(), "qwen2.5-coder-1.5b");
  assert.ok(await panel.getByRole("button", { name: "Send" }).isEnabled());
  const servers = descendants(wb.server!.process.pid!).filter((p) => /\bserve\b/.test(p.cmdline) && /agentls|server\.cli/.test(p.cmdline) && !/code-server|entry\.js/.test(p.cmdline));
  assert.equal(servers.length, 1, JSON.stringify(servers));
  assert.ok(readFileSync(`/proc/${servers[0].pid}/environ`, "utf8").split("\0").includes("AGENTLS_PROVIDER=local"), "the server was started on the local model");
  await snapSidebar(page, ARTIFACTS, "first-run-local.png");
});
