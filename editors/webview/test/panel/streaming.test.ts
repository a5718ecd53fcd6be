// A streamed answer in headless Chromium: what is already on screen stays the same nodes (a
// selection in it survives the next chunks), and the result is what the whole text renders to.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import type { HostToPanel } from "../../src/messages";
import { longAnswer } from "../longanswer";
import { panelSuite, ready, SESSION } from "./harness";

const suite = panelSuite();

let seq = 0;
function update(turnId: string, update: SessionUpdateParams["update"]): HostToPanel {
  return { type: "update", params: { sessionId: SESSION.sessionId, turnId, seq: ++seq, update } };
}

/** Every kind of block, with the places a stream can cut that change what came before. */
const ANSWER = [
  "# Plan\n\nFirst a paragraph with **bold**, `code` and a [link](https://example.com).",
  "Setext-like line\n---\n\nA | B\n--|--\n1 | 2\n3 | 4",
  "- one\n- two\n\n  still two\n- three\n\n1. first\n2. second",
  "```python\ndef f(x):\n\n    # a blank line above, inside the fence\n    return x * 2\n```",
  "> quoted\n> more\n\nText after.\r\nA CRLF line.\n\n~~~\nraw ~~~ text\n~~~",
  "* a\n\n    indented code-ish\n\nLast line ends here.",
].join("\n\n");

/** Cuts `text` into pieces of 1 to 9 characters, the same every run. */
function pieces(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  let n = 7;
  while (i < text.length) {
    n = (n * 31 + 11) % 97;
    const size = 1 + (n % 9);
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out;
}

test("a streamed answer ends as the whole text renders; Markdown cut anywhere renders the same", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  for (const text of pieces(ANSWER)) await p.send(update("t1", { kind: "agent_message_chunk", text }));
  await p.send(update("t1", { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: {} }));
  await p.send(update("t2", { kind: "agent_message_chunk", text: ANSWER }));
  const [streamed, whole] = await p.page.locator("[data-kind=text] .markdown").evaluateAll((els) => els.map((e) => e.innerHTML));
  assert.equal(streamed, whole);
  assert.deepEqual(await p.problems(), []);
  await p.page.close();
});

test("a long last block (a whole file in one fence) is rendered once a frame and ends as the whole text renders", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  const file = Array.from({ length: 400 }, (_, i) => `def f${i}(x):\n    return x + ${i}  # line ${i}`).join("\n");
  const text = `The file:\n\n\`\`\`python\n${file}\n\`\`\`\n\nThat is the file.`;
  const chunks = text.match(/\s*\S+\s*|\s+/g)!;
  await p.page.evaluate(
    ({ sessionId, chunks }) => chunks.forEach((t, i) => window.postMessage({ type: "update", params: { sessionId, turnId: "t_file", seq: 100 + i, update: { kind: "agent_message_chunk", text: t } } }, "*")),
    { sessionId: SESSION.sessionId, chunks },
  );
  await p.page.getByText("That is the file.").waitFor({ timeout: 60_000 });
  seq = 100 + chunks.length;
  await p.send(update("t_whole", { kind: "agent_message_chunk", text }));
  // Text is rendered on the next frame, which a busy machine may give late.
  await p.page.locator("[data-kind=text] .markdown").nth(1).getByText("That is the file.").waitFor({ timeout: 60_000 });
  const [streamed, whole] = await p.page.locator("[data-kind=text] .markdown").evaluateAll((els) => els.map((e) => e.innerHTML));
  assert.equal(streamed, whole);
  await p.page.close();
});

test("while an answer streams, what is on screen stays: the same nodes, and a selection in them survives", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  const page = p.page;
  await p.send(update("t1", { kind: "agent_message_chunk", text: "The first paragraph stays put.\n\nThe sec" }));
  await page.locator("[data-kind=text] p").first().evaluate((el) => {
    (el as HTMLElement & { __kept?: boolean }).__kept = true;
    const range = document.createRange();
    range.selectNodeContents(el);
    getSelection()!.removeAllRanges();
    getSelection()!.addRange(range);
  });
  for (const text of ["ond one grows", " and grows.\n\n", "```js\nconst a = 1;\n", "```\n\nThe end."]) {
    await p.send(update("t1", { kind: "agent_message_chunk", text }));
  }
  const first = page.locator("[data-kind=text] p").first();
  assert.equal(await first.innerText(), "The first paragraph stays put.");
  assert.equal(await first.evaluate((el) => (el as HTMLElement & { __kept?: boolean }).__kept === true), true, "the first paragraph is the node it was");
  assert.equal(await page.evaluate(() => getSelection()!.toString()), "The first paragraph stays put.", "the selection survived the chunks");
  assert.deepEqual(await page.locator("[data-kind=text] p").allInnerTexts(), ["The first paragraph stays put.", "The second one grows and grows.", "The end."]);
  assert.deepEqual(await page.locator("[data-kind=text] .tok-kw").allInnerTexts(), ["const"]);
  assert.equal(await page.locator("[data-kind=text]").getAttribute("aria-busy"), "true", "the log waits for the whole message to announce it");
  await p.send(update("t1", { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: {} }));
  assert.equal(await page.locator("[data-kind=text]").getAttribute("aria-busy"), null);
  if (process.env.PANEL_SCREENSHOTS) await page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/streamed-selection.png`, fullPage: true });
  await page.close();
});

test("thinking streams in place too: an open Thinking block stays open and keeps its first lines", async () => {
  const p = await suite.open("jcef");
  await ready(p);
  const page = p.page;
  await p.send(update("t1", { kind: "agent_thought_chunk", text: "Looking at the parser.\n\nThen" }));
  await page.locator("details.thought summary").click();
  await page.locator("details.thought p").first().evaluate((el) => ((el as HTMLElement & { __kept?: boolean }).__kept = true));
  await p.send(update("t1", { kind: "agent_thought_chunk", text: " the tests." }));
  assert.equal(await page.locator("details.thought").getAttribute("open"), "");
  assert.equal(await page.locator("details.thought p").first().evaluate((el) => (el as HTMLElement & { __kept?: boolean }).__kept === true), true);
  assert.deepEqual(await page.locator("details.thought p").allInnerTexts(), ["Looking at the parser.", "Then the tests."]);
  await page.close();
});

test("a streaming answer is followed to its end until the user scrolls up, and again once they scroll back down", async () => {
  const p = await suite.open("jcef");
  await ready(p);
  const page = p.page;
  const log = page.getByRole("log", { name: "Conversation" });
  const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const gap = () => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
  const lines = (from: number) => Array.from({ length: 40 }, (_, i) => `Line ${from + i} of a long answer.\n\n`).join("");
  await p.send(update("t1", { kind: "agent_message_chunk", text: lines(1) }));
  await page.waitForFunction(() => {
    const el = document.getElementById("transcript")!;
    return el.scrollTop > 0 && el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  });
  await log.evaluate((el) => (el.scrollTop = 0));
  await frames();
  await p.send(update("t1", { kind: "agent_message_chunk", text: lines(41) }));
  await frames();
  assert.equal(await log.evaluate((el) => el.scrollTop), 0, "the view stays where the user scrolled");
  await log.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await frames();
  await p.send(update("t1", { kind: "agent_message_chunk", text: lines(81) }));
  await page.waitForFunction(() => {
    const el = document.getElementById("transcript")!;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  });
  assert.ok((await gap()) < 40, "followed again");
  await page.close();
});

test("a 50 KB answer in word chunks, all queued at once, is handled and its end shown (timed, not asserted)", async (t) => {
  const p = await suite.open("vscode");
  await ready(p);
  const end = "END-OF-THE-LONG-ANSWER";
  // One chunk per word, as the loopback fake model streams it.
  const pieces = longAnswer(end).match(/\s*\S+\s*|\s+/g)!;
  const figures = await p.page.evaluate(
    ({ sessionId, pieces, end }) =>
      new Promise<Record<string, number>>((resolve) => {
        // A message event's timeStamp is when it was queued; a listener added after the panel's
        // runs once the panel has handled it.
        let previous = 0;
        let handling = 0;
        let last = 0;
        window.addEventListener("message", (event) => {
          const now = performance.now();
          handling += now - Math.max(event.timeStamp, previous);
          previous = now;
          if (!String(event.data?.params?.update?.text).includes(end)) return;
          last = event.timeStamp;
          const log = document.getElementById("transcript")!;
          const check = () => {
            if (log.textContent!.includes(end)) setTimeout(() => resolve({ chunks: pieces.length, handling, lastOnScreen: performance.now() - last, wholeOnScreen: performance.now() - first }), 0);
            else requestAnimationFrame(check);
          };
          requestAnimationFrame(check);
        });
        const first = performance.now();
        pieces.forEach((text, i) => window.postMessage({ type: "update", params: { sessionId, turnId: "t_long", seq: i + 1, update: { kind: "agent_message_chunk", text } } }, "*"));
      }),
    { sessionId: SESSION.sessionId, pieces, end },
  );
  t.diagnostic(`panel, 50 KB answer: ${JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v)])))}`);
  assert.match(await p.page.locator("[data-kind=text] p").last().innerText(), /That is all/);
  await p.page.close();
});
