// A 50 KB answer streamed from the loopback fake model (Anthropic wire, one delta per word)
// through the real server and extension into the panel in code-server. The panel is timed from
// inside its frame: when the last chunk's message arrives, when it is on screen, and how long
// the panel's handling of all the chunks took. The test asserts only that the end appears; the
// figures go to out/e2e-streaming/streaming.json and the test's diagnostics (bench/README.md).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { longAnswer } from "../../../webview/test/longanswer";
import { closeWorkbench, EDITORS, openChat, openWorkbench, REPO, sandbox, sendPrompt, snapSidebar, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-streaming");

const END = "END-OF-THE-LONG-ANSWER";

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;
let model: ChildProcess | undefined;

/** The loopback fake model playing one long reply on the Anthropic wire. */
async function fakeModel(text: string): Promise<string> {
  const script = join(box.root, "model-replies.json");
  writeFileSync(script, JSON.stringify([{ text }]));
  const python = process.env.AGENTLS_BIN_DIR ? join(process.env.AGENTLS_BIN_DIR, "python") : join(REPO, ".venv", "bin", "python");
  model = spawn(python, ["-m", "server.testing.fake_llm", "--script", script], { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: model!.stdout! }).once("line", resolve);
    model!.once("exit", (code) => reject(new Error(`the fake model exited (${code})`)));
  });
  return first.trim();
}

before(async () => {
  box = sandbox([]);
  box.env.AGENTLS_PROVIDER = "anthropic";
  box.env.ANTHROPIC_API_KEY = "sk-ant-e2e-streaming";
  box.env.ANTHROPIC_BASE_URL = await fakeModel(longAnswer(END));
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(async () => {
  model?.kill();
  await closeWorkbench(wb, box, ARTIFACTS);
});

interface Figures {
  chunks: number;
  /** ms from the first chunk's arrival to the last chunk's. */
  arrivals: number;
  /** ms the panel spent on the chunks (handling each, and frames while chunks waited). */
  handling: number;
  /** ms from the last chunk's arrival to the first frame that shows it (painted). */
  lastOnScreen: number;
  /** ms from the first chunk's arrival to the last one on screen. */
  wholeOnScreen: number;
}

/**
 * Timers in the panel's frame. A message event's timeStamp is when it reached the frame (it waits
 * in the queue while the panel is busy); a listener added after the panel's runs once the panel
 * has handled it. The panel's time for a chunk is from when it could start (arrival, or the end of
 * the chunk before) to the end of its handling.
 */
async function instrument(): Promise<void> {
  await panel.locator("body").evaluate((_, end) => {
    const w = window as unknown as { __stream: Record<string, number> };
    const m = (w.__stream = { chunks: 0, first: 0, last: 0, handling: 0, shown: 0 });
    let previous = 0;
    const watch = () => {
      const log = document.getElementById("transcript")!;
      const check = () => {
        // In a frame's callback the DOM is what this frame paints; the timeout runs after the paint.
        if (log.textContent!.includes(end)) setTimeout(() => (m.shown = performance.now()), 0);
        else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    };
    window.addEventListener("message", (event: MessageEvent) => {
      const u = event.data?.params?.update;
      if (event.data?.type !== "update" || u?.kind !== "agent_message_chunk") return;
      const now = performance.now();
      m.handling += now - Math.max(event.timeStamp, previous);
      previous = now;
      m.first ||= event.timeStamp;
      m.chunks++;
      if (String(u.text).includes(end)) {
        m.last = event.timeStamp;
        watch();
      }
    });
  }, END);
}

test("a 50 KB answer streams into the panel and its last chunk is shown (timed, not asserted)", { timeout: 900_000 }, async (t) => {
  panel = await openChat(page);
  await instrument();
  await sendPrompt(panel, "Explain the parser at length.");
  await panel.locator("[data-kind=text]").getByText(END).waitFor({ timeout: 600_000 });
  await panel.locator("[data-kind=turn][data-terminal=completed]").waitFor({ timeout: 600_000 });
  await panel.locator("body").evaluate(() => new Promise((r) => setTimeout(r, 100)));
  const m = await panel.locator("body").evaluate(() => (window as unknown as { __stream: Record<string, number> }).__stream);
  assert.ok(m.shown > 0, "the last chunk was seen on screen");
  const figures: Figures = {
    chunks: m.chunks,
    arrivals: Math.round(m.last - m.first),
    handling: Math.round(m.handling),
    lastOnScreen: Math.round((m.shown - m.last) * 10) / 10,
    wholeOnScreen: Math.round(m.shown - m.first),
  };
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, "streaming.json"), JSON.stringify({ answerChars: longAnswer(END).length, ...figures }, null, 2));
  t.diagnostic(`streaming: ${JSON.stringify(figures)}`);
  await snapSidebar(page, ARTIFACTS, "streamed.png");
  assert.match(await panel.locator("[data-kind=text]").last().innerText(), /Step 1: the parser's tokens[\s\S]*That is all/);
});
