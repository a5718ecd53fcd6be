// A new user without agentls installed: neither on PATH nor set in agentls.serverCommand, and no
// Python extension to ask. The chat view still opens at once and says what is wrong while the
// error notification is up (activation never waits on it), and the notification says how to
// install agentls in the README's words.
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { closeWorkbench, EDITORS, openChat, openWorkbench, REPO, snapSidebar, sandbox, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-notfound");

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;

before(async () => {
  box = sandbox([]);
  // No directory with an agentls in it on PATH, here or in the login shell's profile.
  box.env.PATH = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir && !existsSync(join(dir, "agentls"))).join(delimiter);
  for (const rc of [".profile", ".bashrc", ".zshrc"]) writeFileSync(join(box.env.HOME!, rc), "");
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

test("with no agentls anywhere the chat says so while the notification is up, and the notification says how to install it", async () => {
  const panel = await openChat(page, { ready: false });
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Cannot find the agentls server." });
  await toast.waitFor();
  const said = (await toast.locator(".notification-list-item-message").innerText()).trim();
  await panel.locator("#status", { hasText: "Cannot find the agentls server." }).waitFor();
  assert.ok(await toast.isVisible(), "the panel says it while the notification is still up");
  assert.equal(await page.locator(".part.sidebar .monaco-progress-container.active").count(), 0, "no loading bar over the chat view");
  assert.ok(await panel.getByRole("button", { name: "Send" }).isDisabled());
  // The way to install it that the notification gives is the README's.
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  assert.match(said, /\.\/scripts\/serve/);
  assert.ok(readme.includes("editors launch `./scripts/serve`"), "the README names ./scripts/serve too");
  assert.doesNotMatch(said, /pip install agentls\b/);
  await snapSidebar(page, ARTIFACTS, "not-found-panel.png");
  await page.screenshot({ path: join(ARTIFACTS, "not-found.png") });
});
