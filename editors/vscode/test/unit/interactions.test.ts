import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { AskQuestionParams, Question } from "../../../protocol/protocol";
import { answerFor, OTHER_LABEL, pickItems, questionsResult, questionTitle } from "../../src/interactions";
import { askQuestions } from "../../src/ui";
import { cancellation, FakeWindow } from "./fakes";

function fixture(name: string): { params: any; result: any } {
  let dir = __dirname;
  while (!dir.endsWith("editors")) dir = join(dir, "..");
  return JSON.parse(readFileSync(join(dir, "..", "protocol", "fixtures", name), "utf8"));
}

const ASK = fixture("session_ask_question.json");
const [RUNNER, FOLDERS] = (ASK.params as AskQuestionParams).questions as [Question, Question];
const tick = () => new Promise((r) => setImmediate(r));

test("question items: options with descriptions, then Other…", () => {
  assert.deepEqual(pickItems(RUNNER), [
    { label: "pytest", description: "the project's default" },
    { label: "unittest", description: undefined },
    { label: OTHER_LABEL, description: "type your own answer", other: true, alwaysShow: true },
  ]);
  assert.equal(pickItems(RUNNER, " nose2 ").at(-1)!.label, "Other: nose2", "typed text shows in the Other entry");
  assert.equal(pickItems(FOLDERS, "docs").at(-1)!.label, OTHER_LABEL, "multi-select keeps its items stable");
  assert.equal(questionTitle(RUNNER), "Runner: Which test runner?");
  assert.equal(questionTitle(FOLDERS), "Which folders?");
});

test("answers: single, multi, Other, nothing", () => {
  const items = pickItems(RUNNER);
  assert.equal(answerFor(RUNNER, [items[0]], ""), "pytest");
  assert.equal(answerFor(RUNNER, [items[2]], "nose2"), "nose2");
  assert.equal(answerFor(RUNNER, [items[2]], "  "), undefined);
  assert.equal(answerFor(RUNNER, [], ""), undefined);
  const multi = pickItems(FOLDERS);
  assert.deepEqual(answerFor(FOLDERS, [multi[0], multi[1]], ""), ["src", "tests"]);
  assert.deepEqual(answerFor(FOLDERS, [multi[1], multi[2]], "docs"), ["tests", "docs"]);
  assert.deepEqual(answerFor(FOLDERS, [], ""), []);
  assert.deepEqual(questionsResult([RUNNER, FOLDERS], ["pytest", ["src", "tests"]]), ASK.result);
  assert.deepEqual(questionsResult([RUNNER, FOLDERS], ["pytest", undefined]), { declined: true });
});

test("QuickPick flow: both fixture questions in sequence give the fixture's answer", async () => {
  const win = new FakeWindow();
  const result = askQuestions(win, ASK.params.questions);
  const first = await win.nextPick();
  // VS Code shows the step count next to the title: the title must not carry it too.
  assert.equal(first.title, "Runner: Which test runner?");
  assert.equal(first.step, 1);
  assert.equal(first.totalSteps, 2);
  assert.equal(first.canSelectMany, false);
  assert.equal(first.ignoreFocusOut, true);
  first.pick("pytest");
  const second = await win.nextPick();
  assert.equal(second.canSelectMany, true);
  second.pick("src", "tests");
  assert.deepEqual(await result, ASK.result);
  assert.ok(first.disposed && second.disposed);
});

test("QuickPick flow: typing and accepting the Other entry answers in free text", async () => {
  const win = new FakeWindow();
  const result = askQuestions(win, [RUNNER]);
  const pick = await win.nextPick();
  pick.type("nose2");
  assert.equal(pick.activeItems[0].label, "Other: nose2");
  pick.acceptActive();
  assert.deepEqual(await result, { answers: { "Which test runner?": "nose2" } });
  assert.equal(win.inputBoxes.length, 0);
});

test("QuickPick flow: Other with nothing typed asks in an input box (multi-select)", async () => {
  const win = new FakeWindow();
  win.nextInput.push("docs");
  const result = askQuestions(win, [FOLDERS]);
  const pick = await win.nextPick();
  pick.pick("tests", OTHER_LABEL);
  assert.deepEqual(await result, { answers: { "Which folders?": ["tests", "docs"] } });
  assert.equal(win.inputBoxes.length, 1);
});

test("QuickPick flow: Esc declines (and skips the remaining questions)", async () => {
  const win = new FakeWindow();
  const result = askQuestions(win, ASK.params.questions);
  (await win.nextPick()).escape();
  assert.deepEqual(await result, { declined: true });
  await tick();
  assert.equal(win.picks.length, 1);
});

test("QuickPick flow: Esc in the Other input box declines", async () => {
  const win = new FakeWindow();
  win.nextInput.push(undefined);
  const result = askQuestions(win, [RUNNER]);
  (await win.nextPick()).pick(OTHER_LABEL);
  assert.deepEqual(await result, { declined: true });
});

test("QuickPick flow: the server cancelling the request closes the pick", async () => {
  const win = new FakeWindow();
  const token = cancellation();
  const result = askQuestions(win, [RUNNER], token);
  const pick = await win.nextPick();
  token.cancel();
  assert.deepEqual(await result, { declined: true });
  assert.ok(pick.disposed);
});
