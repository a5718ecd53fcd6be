// Contrast under VS Code's own themes: the panel with the CSS variables each theme gives a webview
// (captured from code-server 4.100.3 by the theme e2e test into themes/), every text and status
// pill measured against what it is painted on: at least 4.5:1 (WCAG AA).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import type { HostToPanel } from "../../src/messages";
import { goldenTranscript, repoRoot } from "../fixtures";
import { lowContrast } from "./contrast";
import { panelSuite, SESSION, type PanelPage } from "./harness";

const THEMES = join(repoRoot(), "editors", "webview", "test", "panel", "themes");

const suite = panelSuite();

let seq = 1000;
function update(update: SessionUpdateParams["update"], turnId = "turn_colours"): HostToPanel {
  return { type: "update", params: { sessionId: SESSION.sessionId, turnId, seq: ++seq, update } };
}

/** Something of every colour the panel uses: statuses, outcomes, code tokens, a diff, an open request. */
async function everything(p: PanelPage): Promise<void> {
  for (const msg of goldenTranscript()) await p.send(msg);
  await p.send(update({ kind: "user_message_chunk", text: "and this one?\n[image image/png]" }));
  const code = "```python\ndef f(x: int) -> bool:\n    # a comment\n    return x > 42 and True  # \"str\"\n```";
  await p.send(update({ kind: "agent_message_chunk", text: `A **bold** [link](https://example.com), \`code\`, and\n\n> a quote\n\n${code}\n\n| a | b |\n|---|---|\n| 1 | 2 |` }));
  await p.send(update({ kind: "tool_call", toolCallId: "c_run", name: "bash", title: "Run `npm test`", toolKind: "execute", input: { command: "npm test" } }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "c_run", status: "in_progress", output: "1 passing\n" }));
  await p.send(update({ kind: "tool_call", toolCallId: "c_fail", name: "bash", title: "Run `make`", toolKind: "execute", input: { command: "make" } }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "c_fail", status: "completed", output: JSON.stringify({ exitCode: 2, output: "make: *** [all] Error 2\n" }) }));
  await p.send(update({ kind: "tool_call", toolCallId: "c_ok", name: "bash", title: "Run `true`", toolKind: "execute", input: { command: "true" } }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "c_ok", status: "completed", output: JSON.stringify({ exitCode: 0, output: "" }) }));
  await p.send(update({ kind: "tool_call", toolCallId: "c_err", name: "read_file", title: "Read gone.py", toolKind: "read", input: { path: "gone.py" } }));
  await p.send(update({ kind: "tool_call_update", toolCallId: "c_err", status: "failed", error: "gone.py: no such file" }));
  await p.send(update({ kind: "tool_call", toolCallId: "c_ask", name: "write_file", title: "Write notes.txt", toolKind: "edit", input: { path: "notes.txt", content: "one\n" } }));
  await p.send({
    type: "permissionRequest",
    requestId: "r1",
    params: {
      sessionId: SESSION.sessionId,
      turnId: "turn_colours",
      toolCall: { toolCallId: "c_ask", name: "write_file", title: "Write notes.txt", input: { path: "notes.txt", content: "one\n" }, reason: "writes a file", risk: "medium" } as never,
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    },
  });
  await p.send({ type: "error", message: "Could not switch to plan mode: no" });
  await p.send(update({ kind: "turn_end", terminal: "failed", stopReason: "error", usage: { inputTokens: 5, outputTokens: 1 }, error: "openai: HTTP 500" }, "turn_failed"));
  await p.send(update({ kind: "turn_end", terminal: "timed_out", stopReason: "timeout", usage: {} }, "turn_slow"));
}

/** The themes captured in themes/, by file. */
const THEME_NAMES: Record<string, string> = {
  "light-modern": "Default Light Modern",
  "dark-modern": "Default Dark Modern",
  "hc-black": "Default High Contrast",
  "hc-light": "Default High Contrast Light",
};

test("every theme the e2e test captures is measured here", () => {
  assert.deepEqual(readdirSync(THEMES).filter((f) => f.endsWith(".json")).map((f) => f.replace(/\.json$/, "")).sort(), Object.keys(THEME_NAMES).sort());
});

for (const [file, theme] of Object.entries(THEME_NAMES)) {
  test(`under VS Code's ${theme}, every text and status pill has a contrast of at least 4.5:1`, async () => {
    const variables: Record<string, string> = JSON.parse(readFileSync(join(THEMES, `${file}.json`), "utf8"));
    const p = await suite.open("vscode");
    const page = p.page;
    await page.evaluate((vars) => {
      for (const [name, value] of Object.entries(vars)) document.documentElement.style.setProperty(name, value);
    }, variables);
    await everything(p);
    await page.locator("[data-tool-call-id=c_ask] .ask-note-open").click();
    for (const details of await page.locator("details").all()) await details.evaluate((d) => ((d as HTMLDetailsElement).open = true));
    assert.equal(await page.locator(".status-in_progress").count(), 1, "the colours under test are shown");
    assert.deepEqual(await page.locator("body").evaluate(lowContrast, 4.5), []);
    if (process.env.PANEL_SCREENSHOTS) await page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/${file}.png`, fullPage: true });
    await page.close();
  });
}
