// The chat panel in real headless Chromium, under the VS Code and the JCEF bridge, fed the
// golden session/update fixtures; asserts what a person would see and what the host receives.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import type { HostToPanel } from "../../src/messages";
import { goldenTranscript } from "../fixtures";
import { panelSuite, ready, SESSION, type BridgeKind } from "./harness";

const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const suite = panelSuite();

function live(seq: number, update: SessionUpdateParams["update"]): HostToPanel {
  return { type: "update", params: { sessionId: SESSION.sessionId, turnId: "turn_live", seq, update } };
}

for (const bridge of ["vscode", "jcef"] as BridgeKind[]) {
  describe(`panel under the ${bridge} bridge`, () => {
    test("says ready first, then renders the golden transcript", async () => {
      const p = await suite.open(bridge);
      assert.deepEqual(await p.sent(), [{ type: "ready" }]);
      for (const msg of goldenTranscript()) await p.send(msg);
      const page = p.page;
      const texts = (sel: string) => page.locator(sel).allInnerTexts();

      assert.deepEqual(await texts("[data-kind=user] .bubble"), ["use pytest"]);
      assert.deepEqual(await texts("[data-kind=text]"), ["The file says"]);
      const edit = page.locator("[data-tool-call-id=call_edit]");
      assert.equal(await edit.getAttribute("data-status"), "completed");
      assert.deepEqual(await edit.locator(".diff-line").allInnerTexts(), ["-x = 1", "+x = 2"]);
      assert.equal(await edit.locator(".diff-head a.file").innerText(), "app.py", "paths show relative to the workspace");
      assert.equal(await edit.locator("details").getAttribute("open"), "", "a card with a diff starts open");
      const denied = page.locator("[data-tool-call-id=call_2]");
      assert.equal(await denied.getAttribute("data-status"), "denied");
      assert.equal(await denied.locator(".status").innerText(), "rejected");
      await denied.locator("summary").click();
      assert.match(await denied.locator(".permission").innerText(), /Permission: rejected/);
      // What the server tells the model is not what the user reads, and a rejection is no error.
      assert.equal(await denied.locator(".error-text").count(), 0);
      assert.equal(await denied.locator(".denied-text").innerText(), "You rejected this call.");
      await p.send(live(900, { kind: "tool_call", toolCallId: "call_npm", name: "bash", title: "npm install", toolKind: "execute", input: { command: "npm install" } }));
      await p.send(live(901, { kind: "permission", toolCallId: "call_npm", outcome: "reject_always" }));
      const told = "The user denied this tool call. Do not retry it in another form; ask the user or choose another approach. The user said: use yarn";
      await p.send(live(902, { kind: "tool_call_update", toolCallId: "call_npm", status: "denied", error: told }));
      const npm = page.locator("[data-tool-call-id=call_npm]");
      await npm.locator("summary").click();
      assert.equal(await npm.locator(".denied-text").innerText(), "You rejected this call and calls like it. Your note: use yarn");
      await p.send(live(903, { kind: "tool_call", toolCallId: "call_late", name: "bash", title: "make", toolKind: "execute", input: { command: "make" } }));
      await p.send(live(904, { kind: "tool_call_update", toolCallId: "call_late", status: "denied", error: "The user did not answer the permission request in time; the call was not run." }));
      const late = page.locator("[data-tool-call-id=call_late]");
      await late.locator("summary").click();
      assert.equal(await late.locator(".denied-text").innerText(), "No answer in time; the call was not run.");
      assert.deepEqual(await page.locator(".plan li").allTextContents(), ["●Read the failing test", "◐Fix the parser"]);
      assert.deepEqual(await page.locator(".plan li").evaluateAll((els) => els.map((e) => e.getAttribute("data-status"))), ["completed", "in_progress"]);
      assert.match(await page.locator("[data-kind=subagent]").innerText(), /explorer[\s\S]*completed[\s\S]*The parser lives in src\/parse\.py/);
      const notes = await texts("[data-kind=note]");
      assert.deepEqual(notes, [
        "The model call failed (anthropic: HTTP 529: Overloaded); retry 1 in 0.75 s.",
        "MCP server db: failed — MCP server 'db' is not running (failed: the server closed the connection)",
        "Could not save this session (database or disk is full); it goes on in memory.",
        "You answered the agent's question.",
        "Now in acceptEdits mode (plan approved).",
        "Switched to claude-sonnet-4-6 (image in prompt).",
        "Compacted the conversation: 150,000 → 42,000 tokens.",
        "This folder is not trusted, so its settings were ignored: permissions.mode (bypassPermissions); permissions.allow; tools: null; skill deploy: allowed-tools. Trust this folder",
      ]);
      assert.equal(await page.locator("[data-kind=note] button.trust-folder").count(), 1);
      const end = page.locator("[data-kind=turn]");
      assert.equal(await end.getAttribute("data-terminal"), "aborted");
      assert.match(await end.innerText(), /Cancelled\s+250 in · 28 out tokens/);
      assert.equal(await page.locator("#model").inputValue(), "claude-sonnet-4-6");
      // the golden transcript approves a plan: its mode_changed moved the session to acceptEdits
      assert.match(await page.locator("#status").innerText(), /acceptEdits mode/);
      assert.deepEqual(await p.problems(), []);
      if (process.env.PANEL_SCREENSHOTS) await page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/golden-${bridge}.png`, fullPage: true });
      await page.close();
    });

    test("streams Markdown with highlighted code, thinking collapsed, live tool output", async () => {
      const p = await suite.open(bridge);
      await ready(p);
      const page = p.page;
      const chunks = ["Here is **the", " fix**:\n\n```python\ndef add(a, b):\n", "    return a + b  # sum\n```\n\nDone."];
      await p.send(live(1, { kind: "agent_thought_chunk", text: "Thinking about *sums*." }));
      for (const [i, text] of chunks.entries()) await p.send(live(i + 2, { kind: "agent_message_chunk", text }));
      assert.equal(await page.locator("details.thought").getAttribute("open"), null, "thinking starts collapsed");
      assert.equal(await page.locator("[data-kind=text] strong").innerText(), "the fix");
      const code = page.locator(".code-block code.lang-python");
      assert.equal(await code.innerText(), "def add(a, b):\n    return a + b  # sum");
      assert.deepEqual(await code.locator(".tok-kw").allInnerTexts(), ["def", "return"]);
      assert.deepEqual(await code.locator(".tok-com").allInnerTexts(), ["# sum"]);
      await page.locator(".code-block button.copy").click();
      assert.deepEqual((await p.sent()).at(-1), { type: "copy", text: "def add(a, b):\n    return a + b  # sum" });

      await p.send(live(5, { kind: "tool_call", toolCallId: "sh1", name: "bash", title: "Run `make test`", toolKind: "execute", input: { command: "make test" } }));
      await p.send(live(6, { kind: "tool_call_update", toolCallId: "sh1", status: "in_progress", output: "line 1\n" }));
      const card = page.locator("[data-tool-call-id=sh1]");
      assert.equal(await card.locator("details").getAttribute("open"), "", "a running shell card shows its output");
      assert.match(await card.locator(".section").last().innerText(), /OUTPUT \(LIVE\)\s+\$ make test\s+line 1/i);
      await p.send(live(7, { kind: "tool_call_update", toolCallId: "sh1", status: "in_progress", output: "line 1\nline 2\n" }));
      assert.equal(await card.locator("pre.output").innerText(), "line 1\nline 2\n");
      await p.send(live(8, { kind: "tool_call_update", toolCallId: "sh1", status: "completed", output: "line 1\nline 2\nok\n" }));
      assert.equal(await card.getAttribute("data-status"), "completed");
      assert.equal(await card.locator(".tool-title").innerText(), "Run `make test`");
      assert.equal(await card.locator(".kind svg").getAttribute("aria-label"), "execute");

      await p.send(live(9, { kind: "tool_call", toolCallId: "q1", name: "ask_user_question", title: "Ask: Which runner?", toolKind: "think", input: {} }));
      await p.send(live(10, { kind: "tool_call_update", toolCallId: "q1", status: "completed", output: '{"error": "user_not_reachable", "hint": "x"}' }));
      assert.match(await page.locator("[data-tool-call-id=q1] .note.benign").innerText(), /Nobody could answer/);
      assert.equal(await page.locator("[data-tool-call-id=q1] .status").innerText(), "no answer");
      await p.send(live(11, { kind: "turn_end", terminal: "failed", stopReason: "error", usage: { inputTokens: 1200, outputTokens: 30 }, error: "openai: HTTP 500" }));
      assert.equal(await page.locator("[data-kind=error]").innerText(), "openai: HTTP 500");
      assert.match(await page.locator("[data-kind=turn]").innerText(), /Failed\s+1,200 in · 30 out tokens/);
      assert.deepEqual(await p.problems(), []);
      if (process.env.PANEL_SCREENSHOTS) await page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/live-${bridge}.png`, fullPage: true });
      await page.close();
    });

    test("sending a prompt scrolls to the bottom and follows the turn, though the user had scrolled up", async () => {
      const p = await suite.open(bridge);
      await ready(p);
      const page = p.page;
      const long = Array.from({ length: 80 }, (_, i) => `Line ${i + 1} of an earlier answer.`).join("\n\n");
      await p.send(live(1, { kind: "agent_message_chunk", text: long }));
      await p.send(live(2, { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: {} }));
      const log = page.getByRole("log", { name: "Conversation" });
      const gap = () => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
      await log.evaluate((el) => (el.scrollTop = 0));
      assert.ok((await gap()) > 200, "scrolled up, away from the end");
      await page.getByLabel("Message to the agent").fill("and now?");
      await page.getByLabel("Message to the agent").press("Enter");
      // The view scrolls in the next frame: wait for it (generously) rather than for a time.
      const atEnd = () => page.waitForFunction(() => {
        const el = document.getElementById("transcript")!;
        return el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }, undefined, { timeout: 30_000 });
      await atEnd();
      assert.ok((await gap()) < 40, "the sent prompt is in sight");
      await p.send({ type: "update", params: { sessionId: SESSION.sessionId, turnId: "turn_next", seq: 3, update: { kind: "agent_message_chunk", text: long } } });
      await atEnd();
      assert.ok((await gap()) < 40, "the answer is followed as it streams");
      await page.close();
    });

    test("tool cards read like what they did: a command's terminal and exit code, a file excerpt with line numbers, an edit's diff with no JSON", async () => {
      const p = await suite.open(bridge);
      await ready(p);
      const page = p.page;
      await p.send(live(1, { kind: "tool_call", toolCallId: "t_sh", name: "bash", title: "Run `npm test`", toolKind: "execute", input: { command: "npm test" } }));
      await p.send(live(2, { kind: "tool_call_update", toolCallId: "t_sh", status: "in_progress", output: "2 tests passed\n" }));
      const sh = page.locator("[data-tool-call-id=t_sh]");
      assert.equal(await sh.locator(".terminal .command").innerText(), "$ npm test");
      assert.equal(await sh.locator(".terminal pre.output").innerText(), "2 tests passed\n");
      await p.send(live(3, { kind: "tool_call_update", toolCallId: "t_sh", status: "completed", output: JSON.stringify({ exitCode: 1, output: "2 tests passed\n1 failed\n", truncated: false }) }));
      await sh.locator("details").evaluate((d) => ((d as HTMLDetailsElement).open = true));
      assert.equal(await sh.locator(".terminal pre.output").innerText(), "2 tests passed\n1 failed\n");
      assert.equal(await sh.locator(".terminal .exit-code").innerText(), "exit code 1");
      assert.doesNotMatch(await sh.innerText(), /exitCode|[{}]/, "no JSON on the card");

      const content = "1: # Demo\n2: \n3: A banner that needs a color.";
      await p.send(live(4, { kind: "tool_call", toolCallId: "t_read", name: "read_file", title: "Read README.md", toolKind: "read", input: { path: "README.md" }, locations: [{ path: "/work/README.md" }] }));
      await p.send(live(5, { kind: "tool_call_update", toolCallId: "t_read", status: "completed", output: JSON.stringify({ content, totalLines: 3, startLine: 1, endLine: 3 }) }));
      const read = page.locator("[data-tool-call-id=t_read]");
      await read.locator("summary").click();
      assert.deepEqual(await read.locator(".excerpt .ln").allInnerTexts(), ["1", "2", "3"]);
      assert.deepEqual(await read.locator(".excerpt .code-line").allTextContents(), ["# Demo", "", "A banner that needs a color."]);
      assert.match(await read.locator(".excerpt-head").innerText(), /lines 1–3 of 3/);
      assert.doesNotMatch(await read.innerText(), /totalLines|[{}]/);

      await p.send(live(6, { kind: "tool_call", toolCallId: "t_edit", name: "edit_file", title: "Edit app.py", toolKind: "edit", input: { path: "/work/app.py", old_string: "x = 1", new_string: "x = 2" } }));
      await p.send(live(7, { kind: "tool_call_update", toolCallId: "t_edit", status: "completed", output: '{"path": "/work/app.py", "replacements": 1}', diff: { path: "/work/app.py", oldText: "x = 1\n", newText: "x = 2\n" } }));
      const edit = page.locator("[data-tool-call-id=t_edit]");
      assert.deepEqual(await edit.locator(".diff-line").allInnerTexts(), ["-x = 1", "+x = 2"]);
      assert.doesNotMatch(await edit.innerText(), /replacements|old_string|[{}]/, "the diff says it all");
      assert.deepEqual(await p.problems(), []);
      await page.close();
    });

    test("keyboard: Enter sends, Shift+Enter adds a line, Esc cancels", async () => {
      const p = await suite.open(bridge);
      await ready(p);
      const page = p.page;
      const prompt = page.getByLabel("Message to the agent");
      await prompt.click();
      await page.keyboard.type("first line");
      await page.keyboard.press("Shift+Enter");
      await page.keyboard.type("second line");
      assert.equal(await prompt.inputValue(), "first line\nsecond line");
      await page.keyboard.press("Enter");
      assert.deepEqual((await p.sent()).at(-1), { type: "prompt", prompt: [{ type: "text", text: "first line\nsecond line" }] });
      assert.equal(await prompt.inputValue(), "");
      assert.equal(await page.locator("[data-kind=user] .bubble").innerText(), "first line\nsecond line");
      assert.ok(await page.getByRole("button", { name: "Stop the running turn" }).isVisible());
      assert.ok(!(await page.getByRole("button", { name: "Send" }).isVisible()));
      await page.keyboard.type("queued");
      await page.keyboard.press("Enter");
      assert.equal((await p.sent()).filter((m) => m.type === "prompt").length, 1, "no second prompt while a turn runs");
      await page.keyboard.press("Escape");
      assert.deepEqual((await p.sent()).at(-1), { type: "cancel" });
      await page.getByRole("button", { name: "Stop the running turn" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "cancel" });
      await p.send({ type: "promptResult", result: { turnId: "t1", terminal: "aborted", stopReason: "cancelled", usage: {} } });
      assert.ok(await page.getByRole("button", { name: "Send" }).isVisible());
      assert.match(await page.locator("[data-kind=turn]").innerText(), /Cancelled/);
      assert.equal(await page.locator("[data-kind=turn] .usage").count(), 0, "no '0 in · 0 out tokens' for a turn that used none");
      await page.close();
    });

    test("images: file picker, paste and drop attach; the prompt carries them", async () => {
      const p = await suite.open(bridge);
      await ready(p);
      const page = p.page;
      const chooser = page.waitForEvent("filechooser");
      await page.getByRole("button", { name: "Attach image" }).click();
      await (await chooser).setFiles({ name: "shot.png", mimeType: "image/png", buffer: Buffer.from(PNG_1PX, "base64") });
      await page.locator(".attachment").first().waitFor();
      await page.evaluate((data) => {
        const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
        const transfer = () => {
          const dt = new DataTransfer();
          dt.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
          return dt;
        };
        document.getElementById("prompt")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer(), bubbles: true, cancelable: true }));
        const composer = document.querySelector(".composer")!;
        composer.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer(), bubbles: true, cancelable: true }));
        composer.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer(), bubbles: true, cancelable: true }));
      }, PNG_1PX);
      await page.waitForFunction(() => document.querySelectorAll(".attachment").length === 3);
      await page.getByRole("button", { name: "Remove pasted.png" }).first().click();
      assert.equal(await page.locator(".attachment").count(), 2);
      await page.getByLabel("Message to the agent").fill("what is this?");
      await page.getByRole("button", { name: "Send" }).click();
      const sent = (await p.sent()).at(-1);
      assert.deepEqual(sent, {
        type: "prompt",
        prompt: [
          { type: "text", text: "what is this?" },
          { type: "image", data: PNG_1PX, mimeType: "image/png" },
          { type: "image", data: PNG_1PX, mimeType: "image/png" },
        ],
      });
      assert.equal(await page.locator("[data-kind=user] .meta").innerText(), "2 images attached");
      assert.equal(await page.locator(".attachment").count(), 0);
      assert.deepEqual(await p.problems(), [], "image previews (data: URLs) are allowed by the CSP");
      await page.close();
    });

    test("model picker, new session, session list (unavailable, results, resume)", async () => {
      const p = await suite.open(bridge);
      const many = { ...SESSION, models: { ...SESSION.models, availableModels: [...SESSION.models.availableModels, { modelId: "claude-opus-4-8", name: "claude-opus-4-8", provider: "anthropic" }] } };
      await p.send({ type: "server", state: "ready" });
      await p.send({ type: "session", session: many });
      const page = p.page;
      await page.getByLabel("Model").selectOption("claude-opus-4-8");
      assert.deepEqual((await p.sent()).at(-1), { type: "setModel", modelId: "claude-opus-4-8" });
      await page.getByRole("button", { name: "New session" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "newSession" });

      await page.getByRole("button", { name: "Sessions" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "listSessions" });
      await p.send({ type: "sessions", sessions: [], unavailable: "Session history is not available from this agentls server yet." });
      assert.equal(await page.getByRole("dialog", { name: "Sessions" }).locator(".unavailable").innerText(), "Session history is not available from this agentls server yet.");
      await page.getByLabel("Search sessions").fill("parser");
      await page.waitForFunction(() => (window as any).__sent.some((m: { type: string }) => m.type === "searchSessions"));
      assert.deepEqual((await p.sent()).at(-1), { type: "searchSessions", query: "parser" });
      await p.send({ type: "sessions", query: "parser", sessions: [{ sessionId: "sess_1", title: "Fix the parser", detail: "…the parser lives in src/parse.py…" }] });
      await page.getByRole("listitem").filter({ hasText: "Fix the parser" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "resumeSession", sessionId: "sess_1" });
      await p.send({ type: "session", session: { ...SESSION, sessionId: "sess_1" }, resumed: true });
      assert.ok(await page.getByRole("dialog", { name: "Sessions" }).isHidden());
      assert.equal(await page.locator("[data-kind=note]").innerText(), "Resumed session.");
      await page.getByRole("button", { name: "Sessions" }).click();
      await page.keyboard.press("Escape");
      assert.ok(await page.getByRole("dialog", { name: "Sessions" }).isHidden(), "Esc closes the session list");
      await page.close();
    });

    test("a permission request is asked inline on its card: what will happen, the options, a note; withdrawn when the server says so", async () => {
      const p = await suite.open(bridge);
      const page = p.page;
      await ready(p);
      const OPTIONS = [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
      ] as const;
      const edit = { toolCallId: "call_edit", name: "edit_file", title: "Edit app.py", input: { path: "/work/app.py", old_string: "x = 1\n", new_string: "x = 2\n" } };
      await p.send(live(1, { kind: "tool_call", ...edit, toolKind: "edit", locations: [{ path: "/work/app.py" }] }));
      await p.send(live(2, { kind: "permission", toolCallId: "call_edit" }));
      const request = (requestId: string, toolCall: object): HostToPanel => ({
        type: "permissionRequest",
        requestId,
        params: { sessionId: SESSION.sessionId, turnId: "turn_live", toolCall: toolCall as never, options: [...OPTIONS] },
      });
      await p.send(request("p1", { ...edit, risk: "medium" }));
      const card = page.locator("[data-tool-call-id=call_edit]");
      const ask = card.locator(".ask");
      assert.equal(await ask.getByRole("heading").innerText(), "Allow the agent to edit app.py?");
      assert.deepEqual(await ask.locator(".diff-line").allInnerTexts(), ["-x = 1", "+x = 2"], "the edit's diff is shown before it is allowed");
      assert.deepEqual(await ask.locator(".ask-options button").allInnerTexts(), ["Allow once", "Always allow", "Reject", "Always reject"]);
      assert.equal(await page.evaluate(() => document.activeElement?.closest(".ask") ?? null), null, "no option has the focus: Enter does not approve");
      await page.getByLabel("Message to the agent").press("Enter");
      assert.equal((await p.sent()).filter((m) => m.type === "permissionAnswer").length, 0);
      await ask.getByRole("button", { name: "Allow once" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "permissionAnswer", requestId: "p1", optionId: "allow_once" });
      assert.equal(await card.locator(".ask").count(), 0, "an answered request leaves the card");

      const bash = { toolCallId: "call_rm", name: "bash", title: "Run `rm -rf build`", input: { command: "rm -rf build" }, reason: "recursive forced delete", risk: "high" };
      await p.send(request("p2", bash));
      const rm = page.locator("[data-tool-call-id=call_rm]");
      assert.equal(await rm.locator(".tool-name").innerText(), "bash", "a request for a call not yet shown makes its card");
      assert.equal(await rm.locator(".ask .command").innerText(), "$ rm -rf build");
      assert.match(await rm.locator(".ask").innerText(), /recursive forced delete/);
      assert.match(await rm.locator(".ask").innerText(), /high risk/);
      await rm.getByRole("button", { name: "Reject with a note…" }).click();
      await rm.getByLabel("Your note to the agent").fill("use make clean");
      await rm.getByRole("button", { name: "Reject and send the note" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "permissionAnswer", requestId: "p2", optionId: "reject_once", message: "use make clean" });

      const write = { toolCallId: "call_w", name: "write_file", title: "Write notes.txt", input: { path: "notes.txt", content: "one\ntwo\n" } };
      await p.send(request("p3", write));
      const w = page.locator("[data-tool-call-id=call_w]");
      assert.deepEqual(await w.locator(".ask .diff-line").allInnerTexts(), ["+one", "+two"]);
      await p.send({ type: "permissionClosed", requestId: "p3", reason: "withdrawn" });
      assert.equal(await w.locator(".ask").count(), 0, "a withdrawn request cannot be answered any more");
      assert.deepEqual(await p.problems(), []);
      await page.close();
    });

    test("first run with no model: the panel says so in words and offers a key or the local model", async () => {
      const p = await suite.open(bridge);
      const page = p.page;
      await p.send({ type: "server", state: "ready" });
      await p.send({ type: "setup", detail: "no model provider configured: set ANTHROPIC_API_KEY, … choose one with --provider (config key llm.provider)", offers: ["key", "local"] });
      assert.equal(await page.locator("#status").innerText(), "No model set up");
      const card = page.getByRole("region", { name: "Set up a model" });
      assert.match(await card.innerText(), /agentls needs a model to talk to/);
      assert.doesNotMatch(await card.locator(".setup-text").innerText(), /--provider|llm\.provider/, "no command-line talk in the words");
      assert.ok(await page.getByRole("button", { name: "Send" }).isDisabled());
      await card.getByRole("button", { name: "Enter an API key…" }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "setupProvider", how: "key" });
      await card.getByRole("button", { name: /Use the embedded local model/ }).click();
      assert.deepEqual((await p.sent()).at(-1), { type: "setupProvider", how: "local" });
      await p.send({ type: "session", session: SESSION });
      assert.equal(await page.getByRole("region", { name: "Set up a model" }).count(), 0);
      assert.ok(await page.getByRole("button", { name: "Send" }).isEnabled());
      await page.close();
    });

    test("server restarts are shown and block sending until a session exists", async () => {
      const p = await suite.open(bridge);
      const page = p.page;
      assert.match(await page.locator("#status").innerText(), /Starting agentls/);
      assert.ok(await page.getByRole("button", { name: "Send" }).isDisabled());
      await ready(p);
      assert.ok(await page.getByRole("button", { name: "Send" }).isEnabled());
      await p.send({ type: "server", state: "restarting", message: "agentls stopped unexpectedly; restarting it" });
      assert.equal(await page.locator("#status").innerText(), "agentls stopped unexpectedly; restarting it");
      assert.ok(await page.getByRole("button", { name: "Send" }).isDisabled());
      await page.close();
    });
  });
}

test("a plain browser page hosts the panel too (messages to window.__agentOutbox)", async () => {
  const p = await suite.open("browser");
  await ready(p);
  await p.page.getByLabel("Message to the agent").fill("hi");
  await p.page.keyboard.press("Enter");
  assert.deepEqual(await p.sent(), [{ type: "ready" }, { type: "prompt", prompt: [{ type: "text", text: "hi" }] }]);
  await p.page.close();
});

test("the page's CSP allows only nonce'd scripts", async () => {
  const p = await suite.open("vscode");
  const csp = await p.page.locator("meta[http-equiv=Content-Security-Policy]").getAttribute("content");
  assert.match(csp!, /default-src 'none'/);
  assert.match(csp!, /script-src 'nonce-[^']+'$/);
  const ran = await p.page.evaluate(() => {
    const s = document.createElement("script");
    s.textContent = "window.__injected = true";
    document.body.appendChild(s);
    return (window as any).__injected === true;
  });
  assert.equal(ran, false, "an injected inline script must not run");
  await p.page.close();
});
