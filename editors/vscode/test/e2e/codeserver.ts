// A real VS Code (code-server 4.100.3, VS Code 1.100.3) on loopback, with a private profile,
// the packaged .vsix installed, and Chromium (playwright-core) as the user's browser.
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type FrameLocator, type Page } from "playwright-core";

export const EDITORS = resolve(__dirname, "..", "..", "..", "..");
export const REPO = resolve(EDITORS, "..");

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

export function codeServerEntry(): string {
  const base = process.env.CODE_SERVER_DIR ?? join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "agentls-ci", "code-server");
  const entry = join(base, "node_modules", "code-server", "out", "node", "entry.js");
  if (!existsSync(entry)) throw new Error(`code-server not found at ${entry}: run scripts/test-editors (it installs it) or set CODE_SERVER_DIR`);
  return entry;
}

export function chromiumPath(): string {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim();
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
    server.on("error", reject);
  });
}

export interface Sandbox {
  root: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  userDataDir: string;
  extensionsDir: string;
}

/** A private HOME, config, data and agentls home; the agentls venv's bin first on PATH. */
export function sandbox(script: unknown[]): Sandbox {
  const root = mkdtempSync(join(tmpdir(), "agentls-vscode-e2e-"));
  const dirs = Object.fromEntries(["workspace", "home", "config", "data", "agentls", "user-data", "extensions"].map((d) => [d, join(root, d)]));
  Object.values(dirs).forEach((d) => mkdirSync(d, { recursive: true }));
  const scriptPath = join(root, "replies.json");
  writeFileSync(scriptPath, JSON.stringify(script, null, 2));
  const venvBin = process.env.AGENTLS_BIN_DIR ?? join(REPO, ".venv", "bin");
  if (!existsSync(join(venvBin, "agentls"))) throw new Error(`no agentls in ${venvBin}: create the venv (scripts/test-editors does) or set AGENTLS_BIN_DIR`);
  const env: NodeJS.ProcessEnv = {
    PATH: `${venvBin}:${process.env.PATH}`,
    HOME: dirs.home,
    LANG: "C.UTF-8",
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: join(dirs.home, ".cache"),
    AGENTLS_HOME: dirs.agentls,
    AGENTLS_PROVIDER: "scripted",
    AGENTLS_SCRIPT: scriptPath,
    AGENTLS_LOG: "info",
    // The permission flow is judged without the command sandbox, which lets sandboxed commands run unasked.
    AGENTLS_SANDBOX: "off",
  };
  // The extension host takes PATH from the user's login shell, as for a real user: put the
  // venv's bin on PATH in the sandbox's shell profile.
  const profile = `export PATH="${venvBin}:$PATH"\n`;
  for (const rc of [".profile", ".bashrc", ".zshrc"]) writeFileSync(join(dirs.home, rc), profile);
  const settings = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "chat.commandCenter.enabled": false,
    "window.commandCenter": false,
    "workbench.colorTheme": "Default Dark Modern",
  };
  mkdirSync(join(dirs["user-data"], "User"), { recursive: true });
  writeFileSync(join(dirs["user-data"], "User", "settings.json"), JSON.stringify(settings, null, 2));
  return { root, workspace: dirs.workspace, env, userDataDir: dirs["user-data"], extensionsDir: dirs.extensions };
}

function baseArgs(box: Sandbox): string[] {
  return ["--user-data-dir", box.userDataDir, "--extensions-dir", box.extensionsDir, "--disable-telemetry", "--disable-update-check"];
}

export function installExtension(box: Sandbox, vsix: string): string {
  return execFileSync(process.execPath, [codeServerEntry(), ...baseArgs(box), "--install-extension", vsix, "--force"], {
    env: box.env,
    encoding: "utf8",
    timeout: 120_000,
  });
}

export interface CodeServer {
  url: string;
  process: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

export async function startCodeServer(box: Sandbox): Promise<CodeServer> {
  const port = await freePort();
  const args = [codeServerEntry(), ...baseArgs(box), "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-workspace-trust", "--disable-getting-started-override", box.workspace];
  let log = "";
  let listening: () => void = () => undefined;
  const up = new Promise<void>((resolve) => (listening = resolve));
  const child = spawn(process.execPath, args, { env: box.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const record = (d: Buffer) => {
    log += d;
    if (/HTTP server listening/.test(log)) listening();
  };
  child.stdout!.on("data", record);
  child.stderr!.on("data", record);
  const exited = new Promise<void>((_, reject) => child.once("exit", () => reject(new Error(`code-server exited: ${log}`))));
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`code-server did not start in 5 minutes: ${log}`)), 300_000);
  });
  try {
    await Promise.race([up, exited, stuck]);
  } finally {
    clearTimeout(timer);
  }
  exited.catch(() => undefined);
  return {
    url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(box.workspace)}`,
    process: child,
    log: () => log,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        /* already gone */
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
}

export interface Workbench {
  server: CodeServer;
  browser: Browser;
  page: Page;
}

/**
 * The packaged extension installed in `box`, code-server started, and its workbench open in
 * Chromium; each part goes into `into` as it starts, so `closeWorkbench` can stop what did.
 */
export async function openWorkbench(box: Sandbox, vsix: string, into: Partial<Workbench>): Promise<Workbench> {
  assert.ok(existsSync(vsix), `${vsix} is missing: build it with \`npm --prefix editors run package -w vscode\``);
  assert.match(installExtension(box, vsix), /was successfully installed/);
  const server = (into.server = await startCodeServer(box));
  const browser = (into.browser = await launchBrowser());
  const page = (into.page = await browser.newPage({ viewport: { width: 1280, height: 860 } }));
  // Generous: every wait is for an event, and a busy machine may be slow to show it.
  page.setDefaultTimeout(120_000);
  await page.goto(server.url);
  await page.locator(".monaco-workbench").waitFor();
  return { server, browser, page };
}

/** The extension's output channel (the server's stderr), from every window of `box`. */
export function extensionLogs(box: Sandbox): string[] {
  const logs = join(box.userDataDir, "logs");
  if (!existsSync(logs)) return [];
  return readdirSync(logs, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith("agentls.log"))
    .map((f) => join(logs, f));
}

/**
 * Keeps a screenshot, code-server's log and the extension's output in `artifacts`, closes the
 * browser and code-server, and removes `box`.
 */
export async function closeWorkbench(wb: Partial<Workbench>, box: Sandbox | undefined, artifacts: string): Promise<void> {
  mkdirSync(artifacts, { recursive: true });
  if (wb.page) await wb.page.screenshot({ path: join(artifacts, "last.png") }).catch(() => undefined);
  await wb.browser?.close();
  await wb.server?.stop();
  if (wb.server) writeFileSync(join(artifacts, "code-server.log"), wb.server.log());
  if (!box) return;
  for (const [i, f] of extensionLogs(box).entries()) copyFileSync(f, join(artifacts, `agentls-output-${i + 1}.log`));
  rmSync(box.root, { recursive: true, force: true });
}

/** The chat panel inside the workbench: VS Code nests a webview in two iframes. */
export function panelFrame(page: Page): FrameLocator {
  return page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
}

/**
 * Opens the agentls chat from the activity bar, as a user does, unless it is open already (a
 * click on an open view's icon closes it); with `ready`, waits for its session (the mode label).
 */
export async function openChat(page: Page, { ready = true } = {}): Promise<FrameLocator> {
  const icon = page.locator(".activitybar .action-item a[aria-label^='agentls']");
  await icon.waitFor();
  if (!(await chatShown(page))) await icon.click();
  return chatReady(page, ready);
}

/**
 * The agentls chat a reloaded window shows again by itself, having had it open: the workbench
 * restores its views some time after it appears, so a click on the icon could come before the
 * restore (which then applies the saved state over it) or after it (closing the chat again).
 */
export async function restoredChat(page: Page): Promise<FrameLocator> {
  return chatReady(page, true);
}

const SHOWN = ".activitybar .action-item.checked a[aria-label^='agentls']";

async function chatShown(page: Page): Promise<boolean> {
  return (await page.locator(SHOWN).count()) > 0;
}

async function chatReady(page: Page, ready: boolean): Promise<FrameLocator> {
  const panel = panelFrame(page);
  if (ready) await panel.locator("#status").getByText("default mode").waitFor();
  return panel;
}

/** Types `text` into the panel's composer and sends it with Enter, as a user does. */
export async function sendPrompt(panel: FrameLocator, text: string): Promise<void> {
  const input = panel.getByLabel("Message to the agent");
  await input.click();
  await input.fill(text);
  await input.press("Enter");
}

/** Runs a command from the command palette (F1), by its title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press("F1");
  const quick = page.locator(".quick-input-widget");
  await quick.locator("input").fill(`>${title}`);
  await quick.locator(".monaco-list-row.focused", { hasText: title }).waitFor();
  await page.keyboard.press("Enter");
}

/** Drags the side bar's edge until it is `width` px wide, as a user does. */
export async function resizeSidebar(page: Page, width: number): Promise<void> {
  const bar = (await page.locator(".part.sidebar").boundingBox())!;
  await page.mouse.move(bar.x + bar.width + 1, bar.y + 300);
  await page.mouse.down();
  await page.mouse.move(bar.x + width, bar.y + 300, { steps: 5 });
  await page.mouse.up();
}

/** A screenshot of the side bar (where the chat is) kept as `artifacts/name`; its path. */
export async function snapSidebar(page: Page, artifacts: string, name: string): Promise<string> {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, name);
  await page.locator(".part.sidebar").screenshot({ path });
  return path;
}

export interface ModelRequest {
  path: string;
  body: unknown;
  /** The API key the request came with (x-api-key or the bearer token). */
  key: string;
}

export interface RecordingModel {
  baseUrl: string;
  /** Every request the model got so far, in order (each reaches this process a little after the model answered it). */
  requests: ModelRequest[];
  /** The first request `pick` accepts, once this process has seen it (two minutes at most). */
  request(pick: (request: ModelRequest) => boolean, what: string): Promise<ModelRequest>;
  stop(): void;
}

/** The loopback fake model of recording_model.py; with `apiKey` it refuses any other key (401). */
export async function recordingModel({ apiKey }: { apiKey?: string } = {}): Promise<RecordingModel> {
  const python = process.env.AGENTLS_BIN_DIR ? join(process.env.AGENTLS_BIN_DIR, "python") : join(REPO, ".venv", "bin", "python");
  const script = join(EDITORS, "vscode", "test", "e2e", "recording_model.py");
  const args = apiKey ? [script, "--api-key", apiKey] : [script];
  const child = spawn(python, args, { cwd: REPO, env: { ...process.env, PYTHONPATH: REPO }, stdio: ["ignore", "pipe", "inherit"] });
  const requests: ModelRequest[] = [];
  const lines = createInterface({ input: child.stdout! });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let first = true;
    lines.on("line", (line) => {
      if (first) {
        first = false;
        resolve(line.trim());
      } else requests.push(JSON.parse(line));
    });
    child.once("exit", (code) => reject(new Error(`the fake model exited (${code})`)));
  });
  const request = async (pick: (request: ModelRequest) => boolean, what: string) => {
    for (let waited = 0; waited < 120_000; waited += 100) {
      const hit = requests.find(pick);
      if (hit) return hit;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the model got no request ${what}; it got ${requests.length}`);
  };
  return { baseUrl, requests, request, stop: () => void child.kill() };
}

/** Processes below `root` (Linux /proc), for finding the server the extension spawned. */
export function descendants(root: number): { pid: number; cmdline: string }[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* exited meanwhile */
    }
  }
  const found: { pid: number; cmdline: string }[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      try {
        found.push({ pid: child, cmdline: readFileSync(`/proc/${child}/cmdline`, "utf8").replace(/\0/g, " ").trim() });
      } catch {
        /* exited meanwhile */
      }
      walk(child);
    }
  };
  walk(root);
  return found;
}
