// A real VS Code with `agentls.server.connect: "auto"`: the extension spawns the bridge
// (`agentls serve --connect`), which starts this user's resident server; a prompt streams
// through both, and a reload of the window attaches to the same resident server.
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, EDITORS, extensionLogs, openChat, openWorkbench, restoredChat, sandbox, sendPrompt, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-connect");
const SCRIPT = [{ text: "Answered by the resident server." }, { text: "Still the same server." }];

let box: Sandbox;
const wb: Partial<Workbench> = {};
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
  box = sandbox(SCRIPT);
  box.env.AGENTLS_LOG = "debug"; // every frame the resident server reads, in its log
  const runtime = join(box.root, "run");
  mkdirSync(runtime, { mode: 0o700 });
  box.env.XDG_RUNTIME_DIR = runtime;
  const settingsPath = join(box.userDataDir, "User", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, "agentls.server.connect": "auto" }, null, 2));
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
  if (box) {
    const runtime = join(box.root, "run", "agentls");
    for (const f of existsSync(runtime) ? readdirSync(runtime).filter((f) => f.endsWith(".log")) : []) {
      mkdirSync(ARTIFACTS, { recursive: true });
      copyFileSync(join(runtime, f), join(ARTIFACTS, `resident-${f}`));
    }
  }
  for (const pid of box ? residents() : []) process.kill(pid, "SIGKILL");
  await closeWorkbench(wb, box, ARTIFACTS);
});

/** What the resident server and the extension wrote, for a failure's message; the resident
 * server first writes its threads' and tasks' stacks (SIGUSR1) to its log. */
async function diagnostics(): Promise<string> {
  const runtime = join(box.root, "run", "agentls");
  const logs = () => (existsSync(runtime) ? readdirSync(runtime).filter((f) => f.endsWith(".log")).map((f) => readFileSync(join(runtime, f), "utf8")) : []);
  const pids = residents();
  for (const pid of pids) process.kill(pid, "SIGUSR1");
  const dumped = () => pids.every((pid) => logs().some((t) => t.includes(`stacks of process ${pid}`)));
  for (let waited = 0; !dumped() && waited < 20_000; waited += 200) await new Promise((resolve) => setTimeout(resolve, 200));
  const resident = logs();
  const output = extensionLogs(box).map((f) => readFileSync(f, "utf8"));
  const tail = (text: string) => text.split("\n").slice(-120).map((line) => line.slice(0, 400)).join("\n");
  return [`processes: ${residents().join(", ") || "no resident server"}`, ...resident.map((t) => `resident server log:\n${tail(t)}`), ...output.map((t) => `extension output:\n${tail(t)}`)].join("\n");
}

test("with agentls.server.connect the panel's turns run on a resident server", async () => {
  try {
    await turnsOnAResidentServer();
  } catch (error) {
    // The resident server runs outside code-server: without its log a failure says little.
    // The reporter prints the stack, which holds the message as it was when thrown.
    if (error instanceof Error) {
      const more = `\n${await diagnostics()}`;
      error.message += more;
      error.stack = `${error.stack ?? ""}${more}`;
    }
    throw error;
  }
});

async function turnsOnAResidentServer(): Promise<void> {
  panel = await openChat(page);
  await sendPrompt(panel, "Who answers?");
  await panel.locator("[data-kind=text]").getByText("Answered by the resident server.").waitFor();
  const [resident, ...more] = residents();
  assert.ok(resident, "a resident server runs");
  assert.deepEqual(more, [], "one resident server");

  await page.reload();
  await page.locator(".monaco-workbench").waitFor();
  panel = await restoredChat(page);
  assert.deepEqual(residents(), [resident], "the reloaded window attached to the same server");
}
