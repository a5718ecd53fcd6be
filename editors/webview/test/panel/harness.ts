// Serves the built panel on loopback and opens it in headless Chromium under a chosen bridge:
// "vscode" (a stub acquireVsCodeApi; messages in as window message events) or "jcef"
// (window.__agentHostPost out, window.__agentReceive in), exactly as those hosts do.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import type { SessionInfoResult } from "../../../protocol/protocol";
import { panelHtml } from "../../src/html";
import type { HostToPanel, PanelToHost } from "../../src/messages";
import { fixture } from "../fixtures";

/** The golden fixtures' session. */
export const SESSION = fixture("session_new.json").result as SessionInfoResult;

export type BridgeKind = "vscode" | "jcef" | "browser";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

export function chromiumPath(): string {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("Chromium not found: install Debian's chromium (scripts/test-editors does) or set CHROMIUM");
  }
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
}

const DIST = join(__dirname, "..", "..", "..", "dist");

export async function serveDist(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/") {
      const origin = `http://${req.headers.host}`;
      const nonce = "n" + Math.random().toString(36).slice(2);
      res.setHeader("content-type", "text/html");
      res.end(panelHtml({ scriptUri: `${origin}/panel.js`, styleUri: `${origin}/panel.css`, nonce, cspSource: origin }));
      return;
    }
    const file = { "/panel.js": "text/javascript", "/panel.css": "text/css" }[url.pathname];
    if (!file) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader("content-type", file);
    res.end(readFileSync(join(DIST, url.pathname)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface PanelPage {
  page: Page;
  /** Deliver a host message the way this bridge's host does. */
  send(msg: HostToPanel): Promise<void>;
  /** Everything the panel posted to its host so far. */
  sent(): Promise<PanelToHost[]>;
  /** CSP violations and page errors seen so far (must stay empty). */
  problems(): Promise<string[]>;
}

export async function openPanel(browser: Browser, origin: string, bridge: BridgeKind): Promise<PanelPage> {
  const page = await browser.newPage({ viewport: { width: 420, height: 800 } });
  const logged: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) logged.push(m.text());
  });
  page.on("pageerror", (e) => logged.push(`page error: ${e.message}`));
  await page.addInitScript((kind: BridgeKind) => {
    const w = window as any;
    w.__sent = [];
    if (kind === "vscode") {
      w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__sent.push(m), getState: () => undefined, setState: () => undefined });
    } else if (kind === "jcef") {
      w.__agentHostPost = (json: string) => w.__sent.push(JSON.parse(json));
    }
    document.addEventListener("securitypolicyviolation", (e) => w.__sent.push({ type: "__csp", detail: e.violatedDirective }));
  }, bridge);
  await page.goto(origin + "/");
  await page.waitForSelector("#prompt");
  // A window message is dispatched later, not by postMessage: resolve once it has been handled
  // (this listener comes after the panel's, so it runs after the panel's handler).
  const send = async (msg: HostToPanel) => {
    if (bridge === "jcef") await page.evaluate((m) => (window as any).__agentReceive(JSON.stringify(m)), msg);
    else
      await page.evaluate(
        (m) =>
          new Promise<void>((resolve) => {
            window.addEventListener("message", () => resolve(), { once: true });
            window.postMessage(m, "*");
          }),
        msg,
      );
  };
  const sent = async (): Promise<PanelToHost[]> =>
    bridge === "browser"
      ? page.evaluate(() => (window as any).__agentOutbox ?? [])
      : page.evaluate(() => (window as any).__sent.filter((m: { type: string }) => m.type !== "__csp"));
  const problems = async () => [
    ...logged,
    ...(await page.evaluate(() => (window as any).__sent.filter((m: { type: string }) => m.type === "__csp").map((m: { detail: string }) => `CSP: ${m.detail}`))),
  ];
  return { page, send, sent, problems };
}

/**
 * One headless browser and one server of the built panel for a test file (started before its
 * tests, closed after them): `open(bridge)` opens the panel on them.
 */
export function panelSuite(): { open(bridge: BridgeKind): Promise<PanelPage> } {
  let browser: Browser | undefined;
  let server: Server | undefined;
  let origin = "";
  before(async () => {
    browser = await launchBrowser();
    ({ server, origin } = await serveDist());
  });
  after(async () => {
    await browser?.close();
    server?.close();
  });
  return { open: (bridge) => openPanel(browser!, origin, bridge) };
}

/** The server ready and the golden session open, as a host says them. */
export async function ready(p: PanelPage, session: SessionInfoResult = SESSION): Promise<void> {
  await p.send({ type: "server", state: "ready" });
  await p.send({ type: "session", session });
}
