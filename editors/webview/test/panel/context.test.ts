// Editor context in the composer: chips the host attaches (removable, sent with the next prompt,
// named in the user's message), the active editor's chip, and `@` completion asked of the host.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ResourceContent, ResourceLink } from "../../../protocol/protocol";
import type { PanelToHost } from "../../src/messages";
import { panelSuite, ready, type BridgeKind, type PanelPage } from "./harness";

const SELECTION: ResourceContent = {
  type: "resource",
  uri: "file:///work/src/app.py",
  name: "src/app.py",
  text: "def main():\n    return 1",
  range: { start: { line: 9, character: 0 }, end: { line: 11, character: 0 } },
  context: "selection",
};
const PROBLEMS: ResourceContent = { type: "resource", uri: "file:///work", name: "problems", text: "a.json:1:2 error: Expected comma", context: "diagnostics" };
const ACTIVE: ResourceLink = { type: "resource_link", uri: "file:///work/src/util.py", name: "src/util.py", context: "file" };

const suite = panelSuite();

async function opened(bridge: BridgeKind): Promise<PanelPage> {
  const p = await suite.open(bridge);
  await ready(p);
  return p;
}

async function prompts(p: PanelPage): Promise<Extract<PanelToHost, { type: "prompt" }>["prompt"][]> {
  return (await p.sent()).flatMap((m) => (m.type === "prompt" ? [m.prompt] : []));
}

for (const bridge of ["vscode", "jcef"] as BridgeKind[]) {
  describe(`context chips under the ${bridge} bridge`, () => {
    test("attached chips show, can be removed, go with the next prompt and are named in the user's message", async () => {
      const p = await opened(bridge);
      const { page } = p;
      const chips = page.locator("#context-chips .chip");
      await p.send({ type: "attach", blocks: [SELECTION] });
      await p.send({ type: "attach", blocks: [PROBLEMS, SELECTION] });
      assert.deepEqual(await chips.locator(".chip-label").allInnerTexts(), ["@src/app.py:10-11 (selection)", "@problems (diagnostics)"], "the same selection again is one chip");
      await page.getByRole("button", { name: "Remove @problems (diagnostics)" }).click();
      assert.deepEqual(await chips.locator(".chip-label").allInnerTexts(), ["@src/app.py:10-11 (selection)"]);
      await page.getByLabel("Message to the agent").fill("what does this do?");
      await page.getByLabel("Message to the agent").press("Enter");
      assert.deepEqual(await prompts(p), [[{ type: "text", text: "what does this do?" }, SELECTION]]);
      assert.equal(await chips.count(), 0, "sent chips leave the composer");
      assert.equal(await page.locator("#context-chips").isHidden(), true);
      assert.equal(await page.locator("[data-kind=user] .bubble").innerText(), "what does this do?\n@src/app.py:10-11 (selection)");
      assert.deepEqual(await p.problems(), []);
    });
  });
}

describe("context in the composer (VS Code bridge)", () => {
  test("a chip alone can be sent; a host's attach with text and send starts the prompt", async () => {
    const p = await opened("vscode");
    await p.send({ type: "attach", blocks: [SELECTION] });
    await p.page.getByLabel("Message to the agent").press("Enter");
    await p.send({ type: "promptResult", result: { turnId: "t1", terminal: "completed", stopReason: "end_turn", usage: {} } });
    await p.send({ type: "attach", blocks: [PROBLEMS], text: "Fix this problem.", send: true });
    assert.deepEqual(await prompts(p), [[SELECTION], [{ type: "text", text: "Fix this problem." }, PROBLEMS]]);
  });

  test("the active editor's chip goes with every prompt until removed; it is no prompt by itself", async () => {
    const p = await opened("vscode");
    const { page } = p;
    const input = page.getByLabel("Message to the agent");
    const finish = (turnId: string) => p.send({ type: "promptResult", result: { turnId, terminal: "completed", stopReason: "end_turn", usage: {} } });
    await p.send({ type: "activeEditor", block: ACTIVE });
    const auto = page.locator("#context-chips .chip.auto");
    assert.equal(await auto.locator(".chip-label").innerText(), "@src/util.py");
    await input.press("Enter");
    assert.deepEqual(await prompts(p), [], "the active editor alone is not sent");
    await input.fill("one");
    await input.press("Enter");
    await finish("t1");
    assert.equal(await auto.count(), 1, "it stays for the next prompt");
    await input.fill("two");
    await input.press("Enter");
    await finish("t2");
    await page.getByRole("button", { name: "Remove @src/util.py" }).click();
    await p.send({ type: "activeEditor", block: ACTIVE });
    assert.equal(await auto.count(), 0, "removed, it stays away while the editor is the same");
    await input.fill("three");
    await input.press("Enter");
    await finish("t3");
    const selected: ResourceContent = { ...SELECTION, uri: ACTIVE.uri, name: ACTIVE.name };
    await p.send({ type: "activeEditor", block: selected });
    assert.equal(await auto.locator(".chip-label").innerText(), "@src/util.py:10-11 (selection)", "a new selection brings it back");
    await p.send({ type: "activeEditor" });
    assert.equal(await auto.count(), 0);
    assert.deepEqual(await prompts(p), [
      [{ type: "text", text: "one" }, ACTIVE],
      [{ type: "text", text: "two" }, ACTIVE],
      [{ type: "text", text: "three" }],
    ]);
  });

  test("@ asks the host, lists its answer, and a pick replaces the typed mention with the host's chip", async () => {
    const p = await opened("vscode");
    const { page } = p;
    const input = page.getByLabel("Message to the agent");
    await input.fill("look at ");
    await input.press("End");
    await input.pressSequentially("@pa");
    const queries = async () => (await p.sent()).flatMap((m) => (m.type === "mentionQuery" ? [m.query] : []));
    await page.waitForFunction(() => (window as any).__sent.some((m: any) => m.type === "mentionQuery" && m.query === "pa"));
    assert.equal((await queries()).at(-1), "pa");
    const menu = page.getByRole("listbox", { name: "Mentions" });
    // An answer to an older query is not shown.
    await p.send({ type: "mentions", query: "p", items: [{ kind: "file", label: "old.py", uri: "file:///work/old.py" }] });
    await p.send({
      type: "mentions",
      query: "pa",
      items: [
        { kind: "file", label: "src/parser.py", uri: "file:///work/src/parser.py" },
        { kind: "file", label: "docs/parse.md", uri: "file:///work/docs/parse.md" },
      ],
    });
    assert.deepEqual(await menu.getByRole("option").locator(".label").allInnerTexts(), ["@src/parser.py", "@docs/parse.md"]);
    await input.press("ArrowDown");
    assert.equal(await menu.getByRole("option", { selected: true }).locator(".label").innerText(), "@docs/parse.md");
    await input.press("Enter");
    assert.equal(await menu.isHidden(), true);
    assert.equal(await input.inputValue(), "look at ", "the typed mention is gone");
    assert.deepEqual((await p.sent()).at(-1), { type: "mention", item: { kind: "file", label: "docs/parse.md", uri: "file:///work/docs/parse.md" } });
    assert.deepEqual(await prompts(p), [], "Enter picked, it did not send");
    const doc: ResourceContent = { type: "resource", uri: "file:///work/docs/parse.md", name: "docs/parse.md", text: "# Parse", context: "file" };
    await p.send({ type: "attach", blocks: [doc] });
    assert.equal(await page.locator("#context-chips .chip-label").innerText(), "@docs/parse.md");
    // Esc closes the list without stopping anything; a word with @ inside is no mention.
    await input.pressSequentially("@pro");
    await page.waitForFunction(() => (window as any).__sent.some((m: any) => m.type === "mentionQuery" && m.query === "pro"));
    assert.equal(await menu.isHidden(), true, "nothing opens before the host answers");
    await p.send({ type: "mentions", query: "pro", items: [{ kind: "problems", label: "problems", detail: "none reported" }] });
    await menu.waitFor();
    await input.press("Escape");
    assert.equal(await menu.isHidden(), true);
    assert.equal((await p.sent()).filter((m) => m.type === "cancel").length, 0);
    await input.fill("mail me@example");
    assert.equal(await menu.isHidden(), true);
    await input.fill("look at the parse docs");
    await input.press("Enter");
    assert.deepEqual((await prompts(p)).at(-1), [{ type: "text", text: "look at the parse docs" }, doc]);
  });
});
