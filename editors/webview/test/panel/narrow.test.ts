// The panel 250 px wide (a narrow side bar) and under a theme's colours, in headless Chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import type { HostToPanel } from "../../src/messages";
import { goldenTranscript } from "../fixtures";
import { panelSuite, SESSION, type PanelPage } from "./harness";

const suite = panelSuite();

let seq = 1000;
function update(update: SessionUpdateParams["update"]): HostToPanel {
  return { type: "update", params: { sessionId: SESSION.sessionId, turnId: "turn_narrow", seq: ++seq, update } };
}

/** Long words, paths, commands, code and tables: what pushes a narrow panel sideways. */
async function crowd(p: PanelPage): Promise<void> {
  for (const msg of goldenTranscript()) await p.send(msg);
  const long = "/home/ada/projects/a-rather-long-project-name/src/components/VeryLongComponentFileName.tsx";
  await p.send(update({ kind: "agent_message_chunk", text: `See ${long} and https://example.com/${"x".repeat(120)}\n\n| column one | column two | column three | column four |\n|---|---|---|---|\n| a | b | c | d |\n\n\`\`\`python\ndef f():\n    return "${"y".repeat(150)}"\n\`\`\`\n` }));
  await p.send(update({ kind: "tool_call", toolCallId: "n1", name: "ask_user_question", title: `Ask: ${"Which-of-these-colours-".repeat(4)}?`, toolKind: "think", input: {} }));
  await p.send(update({ kind: "tool_call", toolCallId: "n2", name: "bash", title: "Run `npm run build:production -- --verbose`", toolKind: "execute", input: { command: `npm run build:production -- --verbose ${"--flag ".repeat(20)}` } }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "n2", status: "in_progress", output: `${"z".repeat(300)}\n` }));
  await p.send(update({ kind: "tool_call", toolCallId: "n3", name: "edit_file", title: `Edit ${long}`, toolKind: "edit", input: { path: long, old_string: "a", new_string: "b" }, locations: [{ path: long }] }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "n3", status: "completed", output: "{}", diff: { path: long, oldText: `const a = "${"q".repeat(100)}";\n`, newText: "const a = 1;\n" } }));
}

test("250 px wide: nothing scrolls sideways, every tool title shows, every status pill stays on its card", async () => {
  const p = await suite.open("vscode");
  const page = p.page;
  await page.setViewportSize({ width: 250, height: 900 });
  await crowd(p);
  for (const details of await page.locator(".tool details").all()) await details.evaluate((d) => ((d as HTMLDetailsElement).open = true));
  const sideways = await page.evaluate(() =>
    [document.documentElement, document.body, ...document.querySelectorAll("#app, #transcript, .toolbar, .composer, .msg, .tool, .tool-body")]
      .filter((el) => el.scrollWidth > el.clientWidth)
      .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`),
  );
  assert.deepEqual(sideways, [], "no horizontal scroll (scrollWidth <= clientWidth)");
  const cards = await page.locator(".tool").evaluateAll((els) =>
    els.map((el) => {
      const box = el.querySelector("summary")!.getBoundingClientRect();
      const title = el.querySelector(".tool-title")!.getBoundingClientRect();
      const pill = el.querySelector(".status")!.getBoundingClientRect();
      return { id: el.getAttribute("data-tool-call-id"), title: Math.round(title.width), pillInside: pill.right <= box.right + 0.5 && pill.left >= box.left };
    }),
  );
  for (const card of cards) {
    assert.ok(card.title >= 40, `${card.id}: the title shows (${card.title} px)`);
    assert.ok(card.pillInside, `${card.id}: the status pill stays inside its card`);
  }
  if (process.env.PANEL_SCREENSHOTS) await page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/narrow-250.png`, fullPage: true });
  await page.close();
});

test("code keywords are coloured under VS Code's own theme variables (its keyword symbol colour is the text colour)", async () => {
  const p = await suite.open("vscode");
  const page = p.page;
  // Default Dark Modern as VS Code 1.100 sets them on a webview: symbolIcon.keywordForeground defaults to the foreground.
  await page.evaluate(() => {
    const vars = { "--vscode-foreground": "#cccccc", "--vscode-symbolIcon-keywordForeground": "#cccccc", "--vscode-sideBar-background": "#181818" };
    for (const [name, value] of Object.entries(vars)) document.documentElement.style.setProperty(name, value);
  });
  await p.send({ type: "server", state: "ready" });
  await p.send({ type: "session", session: SESSION });
  await p.send(update({ kind: "agent_message_chunk", text: "```python\ndef f():\n    return None\n```" }));
  const [kw, text] = await page.locator(".tok-kw").first().evaluate((el) => [getComputedStyle(el).color, getComputedStyle(document.body).color]);
  assert.notEqual(kw, text, "a keyword is not the text colour");
  await page.close();
});
