// How a turn's outcomes read in the panel (headless Chromium): cancelled tool calls, the mode
// label, a question nobody answered, a rejection, a resumed image, a cancelled turn's tokens.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionUpdateParams } from "../../../protocol/protocol";
import type { HostToPanel } from "../../src/messages";
import { panelSuite, ready, SESSION, type PanelPage } from "./harness";

const suite = panelSuite();

let seq = 0;
function update(turnId: string, update: SessionUpdateParams["update"]): HostToPanel {
  return { type: "update", params: { sessionId: SESSION.sessionId, turnId, seq: ++seq, update } };
}

/** With PANEL_SCREENSHOTS set, the page as a person would see it, into that folder. */
async function snap(p: PanelPage, name: string): Promise<void> {
  if (process.env.PANEL_SCREENSHOTS) await p.page.screenshot({ path: `${process.env.PANEL_SCREENSHOTS}/${name}.png`, fullPage: true });
}

const INTERRUPTED = "Interrupted: the turn was stopped before this tool call finished; it did not complete.";

test("a tool call cancelled mid-run says cancelled, never running, and no card is left open at the turn's end", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  const page = p.page;
  await p.send(update("t1", { kind: "tool_call", toolCallId: "run", name: "bash", title: "Run `sleep 60`", toolKind: "execute", input: { command: "sleep 60" } }));
  await p.send(update("t1", { kind: "tool_call_update", toolCallId: "run", status: "in_progress", output: "waiting\n" }));
  await p.send(update("t1", { kind: "tool_call", toolCallId: "child", name: "grep", title: "Search TODO", toolKind: "search", input: { pattern: "TODO" }, parentToolCallId: "run" }));
  await p.send(update("t1", { kind: "tool_call_update", toolCallId: "child", status: "in_progress" }));
  await p.send(update("t1", { kind: "tool_call_update", toolCallId: "run", status: "failed", error: INTERRUPTED }));
  await p.send(update("t1", { kind: "turn_end", terminal: "aborted", stopReason: "cancelled", usage: {} }));
  for (const id of ["run", "child"]) {
    const card = page.locator(`[data-tool-call-id=${id}]`);
    assert.equal(await card.locator(".status").innerText(), "cancelled", `${id} says cancelled`);
    if ((await card.locator("details").getAttribute("open")) === null) await card.locator("summary").click();
    assert.equal(await card.locator(".error-text").count(), 0, `${id}: a cancel is no error`);
    assert.match(await card.locator(".tool-body").innerText(), /Stopped with the turn/);
  }
  assert.equal(await page.locator(".status-in_progress, .status-pending").count(), 0);

  await p.send(update("t2", { kind: "tool_call", toolCallId: "lost", name: "read_file", title: "Read a.py", toolKind: "read", input: { path: "a.py" } }));
  await p.send(update("t2", { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 2 } }));
  assert.equal(await page.locator("[data-tool-call-id=lost]").getAttribute("data-status"), "failed", "a card the server never closed is closed at turn_end");
  await snap(p, "cancelled-tools");
  await page.close();
});

test("the mode label follows a mode switch and never shows a session that is gone", async () => {
  const p = await suite.open("jcef");
  await ready(p);
  const status = p.page.locator("#status");
  assert.equal(await status.innerText(), "default mode");
  await p.send({ type: "mode", modeId: "plan" });
  assert.equal(await status.innerText(), "plan mode");
  await p.send(update("t1", { kind: "mode_changed", mode: "acceptEdits", reason: "plan approved" }));
  assert.equal(await status.innerText(), "acceptEdits mode");
  await p.send({ type: "server", state: "restarting", message: "restarting agentls" });
  await p.send({ type: "server", state: "ready" });
  assert.equal(await status.innerText(), "Starting a session…", "the old session's mode is not shown for the next one");
  await p.send({ type: "session", session: SESSION });
  assert.equal(await status.innerText(), "default mode");
  await p.page.close();
});

test("a question nobody answered in time says so; a rejection is a neutral note, not a red error", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  const page = p.page;
  const questions = [{ question: "Which color?", header: "Color", options: [{ label: "Red" }, { label: "Blue" }], multiSelect: false }];
  await p.send(update("t1", { kind: "tool_call", toolCallId: "q", name: "ask_user_question", title: "Ask: Which color?", toolKind: "think", input: { questions } }));
  await p.send(update("t1", { kind: "question", questions }));
  await p.send(update("t1", { kind: "tool_call_update", toolCallId: "q", status: "completed", output: JSON.stringify({ error: "user_timeout", hint: "x" }) }));
  assert.match(await page.locator("[data-kind=note]").innerText(), /No answer in time/, "the question's note does not stay 'asked'");

  const told = "The user denied this tool call. Do not retry it in another form; ask the user or choose another approach. The user said: not now";
  for (const [id, status] of [["w1", "denied"], ["w2", "failed"]] as const) {
    await p.send(update("t1", { kind: "tool_call", toolCallId: id, name: "write_file", title: "Write a.txt", toolKind: "edit", input: { path: "a.txt", content: "a" } }));
    await p.send(update("t1", { kind: "tool_call_update", toolCallId: id, status, error: told }));
    const card = page.locator(`[data-tool-call-id=${id}]`);
    if ((await card.locator("details").getAttribute("open")) === null) await card.locator("summary").click();
    assert.equal(await card.locator(".error-text").count(), 0, `${status}: the model's instruction is not shown as an error`);
    assert.doesNotMatch(await card.innerText(), /Do not retry/);
    assert.equal(await card.locator(".section .label", { hasText: /^Rejected$/i }).count(), 1, `${status}: a 'Rejected' note`);
    assert.equal(await card.locator(".status").innerText(), "rejected");
    const [pill, error] = await card.locator(".status").evaluate((el) => [getComputedStyle(el).color, getComputedStyle(document.documentElement).getPropertyValue("--error")]);
    const probe = await page.evaluate((c) => {
      const s = document.createElement("span");
      s.style.color = c;
      document.body.appendChild(s);
      const v = getComputedStyle(s).color;
      s.remove();
      return v;
    }, error.trim());
    assert.notEqual(pill, probe, `${status}: the pill is not the error colour`);
  }
  await snap(p, "question-timeout-and-rejections");
  await page.close();
});

test("a resumed prompt's image is an image chip; a cancelled turn shows no token counts it does not know", async () => {
  const p = await suite.open("jcef");
  await ready(p);
  const page = p.page;
  await p.send(update("t1", { kind: "user_message_chunk", text: "what is on this screenshot?\n[image image/png]" }));
  const user = page.locator("[data-kind=user]");
  assert.equal(await user.locator(".bubble").innerText(), "what is on this screenshot?");
  assert.doesNotMatch(await user.innerText(), /\[image/);
  assert.deepEqual(await user.locator(".image-chip").allInnerTexts(), ["image"]);
  await p.send(update("t1", { kind: "turn_end", terminal: "aborted", stopReason: "cancelled", usage: { inputTokens: 0, outputTokens: 0 } }));
  await p.send(update("t2", { kind: "turn_end", terminal: "aborted", stopReason: "cancelled", usage: {} }));
  assert.equal(await page.locator("[data-kind=turn] .usage").count(), 0);
  assert.doesNotMatch(await page.locator("#transcript").innerText(), /0 in|0 out/);
  await snap(p, "resumed-image-cancelled-turns");
  await page.close();
});

test("a resumed session's replayed mode and model switches do not override the mode and model it has now", async () => {
  const p = await suite.open("vscode");
  await p.send({ type: "server", state: "ready" });
  // Switched back to default mode and the first model after the turn below (session/set_mode and
  // set_model are not in the history): session/load says so, the replay says what happened then.
  await p.send({ type: "session", session: SESSION, resumed: true });
  const model = SESSION.model;
  await p.send(update("t_old", { kind: "user_message_chunk", text: "plan it" }));
  await p.send(update("t_old", { kind: "mode_changed", mode: "acceptEdits", reason: "plan approved" }));
  await p.send(update("t_old", { kind: "model_switched", model: "claude-opus-4-8", reason: "image in prompt" }));
  await p.send(update("t_old", { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: {} }));
  const page = p.page;
  assert.match(await page.locator("[data-kind=note]").allInnerTexts().then((t) => t.join("\n")), /Now in acceptEdits mode/, "the history still says it");
  assert.equal(await page.locator("#status").innerText(), "default mode");
  assert.equal(await page.locator("#model").inputValue(), model);
  await page.getByLabel("Message to the agent").fill("go on");
  await page.getByLabel("Message to the agent").press("Enter");
  await p.send(update("t_new", { kind: "mode_changed", mode: "plan", reason: "asked to plan" }));
  await p.send(update("t_new", { kind: "turn_end", terminal: "completed", stopReason: "end_turn", usage: {} }));
  assert.equal(await page.locator("#status").innerText(), "plan mode", "a switch in a live turn is the mode now");
  await page.close();
});

test("the turn's plan stays in view at the top while the transcript scrolls, updated in place; a finished plan lets go", async () => {
  const p = await suite.open("vscode");
  await ready(p);
  const page = p.page;
  const entries = (statuses: string[]) => statuses.map((status, i) => ({ id: `e${i}`, content: `Step ${i + 1}`, status }) as never);
  await p.send(update("t_plan", { kind: "user_message_chunk", text: "Fix the parser, step by step." }));
  await p.send(update("t_plan", { kind: "plan", entries: entries(["in_progress", "pending", "pending"]) }));
  const long = Array.from({ length: 60 }, (_, i) => `Paragraph ${i + 1} of a long answer.`).join("\n\n");
  await p.send(update("t_plan", { kind: "agent_message_chunk", text: long }));
  await p.send(update("t_plan", { kind: "plan", entries: entries(["completed", "in_progress", "pending"]) }));
  const transcript = page.locator("#transcript");
  await transcript.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await page.getByText("Paragraph 60 of a long answer.").waitFor();
  const plan = page.locator("[data-kind=plan]");
  assert.equal(await plan.count(), 1, "one plan, updated in place");
  const inView = async () => {
    const [box, view] = [(await plan.boundingBox())!, (await transcript.boundingBox())!];
    return box.y >= view.y - 1 && box.y + box.height <= view.y + view.height;
  };
  assert.ok(await inView(), "the plan is in view though its turn scrolled far past it");
  assert.equal(await plan.locator(".label").textContent(), "Plan · 1/3");
  await snap(p, "plan-pinned");
  await p.send(update("t_plan", { kind: "plan", entries: entries(["completed", "completed", "completed"]) }));
  await transcript.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  assert.equal(await inView(), false, "a finished plan scrolls with its turn");
  await page.close();
});
