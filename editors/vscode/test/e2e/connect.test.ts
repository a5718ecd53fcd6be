// A real VS Code with `agentls.server.connect: "auto"`: the extension spawns the bridge
// (`agentls serve --connect`), which starts this user's resident server; a prompt streams
// through both, and a reload of the window attaches to the same resident server.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Browser, FrameLocator, Page } from "playwright-core";
import { EDITORS, installExtension, launchBrowser, panelFrame, sandbox, startCodeServer, type CodeServer, type Sandbox } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-connect");
const SCRIPT = [{ text: "Answered by the resident server." }, { text: "Still the same server." }];

let box: Sandbox;
let server: CodeServer;
let browser: Browser;
let page: Page;
let panel: FrameLocator;

/** Resident servers listening under this sandbox (they run detached, outside code-server). */
function residents(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (argv.includes("--listen") && argv.some((a) => a.includes(box.root))) found.push(Number(entry));
  }
  return found;
}

before(async () => {
  assert.ok(existsSync(VSIX), `${VSIX} is missing: build it with \`npm --prefix editors run package -w vscode\``);
  box = sandbox(SCRIPT);
  const runtime = join(box.root, "run");
  mkdirSync(runtime, { mode: 0o700 });
  box.env.XDG_RUNTIME_DIR = runtime;
  const settingsPath = join(box.userDataDir, "User", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, "agentls.server.connect": "auto" }, null, 2));
  assert.match(installExtension(box, VSIX), /was successfully installed/);
  server = await startCodeServer(box);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(120_000);
  await page.goto(server.url);
  await page.locator(".monaco-workbench").waitFor();
});

after(async () => {
  if (page) {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "last.png") }).catch(() => undefined);
  }
  await browser?.close();
  await server?.stop();
  if (box) {
    for (const pid of residents()) process.kill(pid, "SIGKILL");
    rmSync(box.root, { recursive: true, force: true });
  }
});

async function ask(text: string): Promise<void> {
  const input = panel.getByLabel("Message to the agent");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

test("with agentls.server.connect the panel's turns run on a resident server", async () => {
  await page.locator(".activitybar .action-item a[aria-label^='agentls']").click();
  panel = panelFrame(page);
  await panel.locator("#status").getByText("default mode").waitFor();
  await ask("Who answers?");
  await panel.locator("[data-kind=text]").getByText("Answered by the resident server.").waitFor();
  const [resident, ...more] = residents();
  assert.ok(resident, "a resident server runs");
  assert.deepEqual(more, [], "one resident server");

  await page.reload();
  await page.locator(".monaco-workbench").waitFor();
  await page.locator(".activitybar .action-item a[aria-label^='agentls']").click();
  panel = panelFrame(page);
  await panel.locator("#status").getByText("default mode").waitFor();
  assert.deepEqual(residents(), [resident], "the reloaded window attached to the same server");
});
