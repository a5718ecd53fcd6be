// The chat panel in a side bar dragged down to 250 px in code-server: a turn with a long command,
// a long path and a wide table scrolls nowhere sideways, and each tool card shows its title and
// its status pill inside the card (screenshot in out/e2e-narrow/).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { closeWorkbench, EDITORS, openChat, openWorkbench, resizeSidebar, sandbox, sendPrompt, snapSidebar, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-narrow");
const LONG = "src/components/a-rather-long-folder-name/VeryLongComponentFileNameForTesting.tsx";
const SCRIPT = [
  { text: `Looking at ${LONG}.`, toolCalls: [{ name: "read_file", arguments: { path: LONG } }] },
  { text: "Running it.", toolCalls: [{ name: "bash", arguments: { command: `echo ${"x".repeat(160)}` } }] },
  { text: `Done: https://example.com/${"y".repeat(80)}\n\n| column one | column two | column three |\n|---|---|---|\n| a | b | c |\n\n\`\`\`sh\necho ${"z".repeat(120)}\n\`\`\`` },
];

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;

before(async () => {
  box = sandbox(SCRIPT);
  mkdirSync(join(box.workspace, "src", "components", "a-rather-long-folder-name"), { recursive: true });
  writeFileSync(join(box.workspace, LONG), "export const x = 1;\n");
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

/** What in the panel is wider than its box (scrollWidth > clientWidth). */
function scrollsSideways(): Promise<string[]> {
  return panel.locator("body").evaluate(() =>
    [document.documentElement, document.body, ...Array.from(document.querySelectorAll("#transcript, .msg, .tool"))]
      .filter((el) => el.scrollWidth > el.clientWidth)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} > ${el.clientWidth}`),
  );
}

test("250 px wide, nothing in the panel scrolls sideways and tool titles and pills stay on their cards", async () => {
  panel = await openChat(page);
  await resizeSidebar(page, 250);
  await sendPrompt(panel, "Look at the component and run it.");
  // The command is asked for on its card, which must fit the narrow panel too.
  const ask = panel.locator(".ask");
  await ask.waitFor();
  await snapSidebar(page, ARTIFACTS, "narrow-250-ask.png");
  assert.deepEqual(await scrollsSideways(), [], "no horizontal scroll with the request on its card");
  await ask.getByRole("button", { name: "Allow once" }).click();
  await panel.locator("[data-kind=turn]").waitFor();
  const width = await panel.locator("body").evaluate(() => document.documentElement.clientWidth);
  assert.ok(width <= 260, `the panel is narrow (${width} px)`);
  for (const details of await panel.locator(".tool details").all()) await details.evaluate((d) => ((d as HTMLDetailsElement).open = true));
  const sideways = await scrollsSideways();
  await snapSidebar(page, ARTIFACTS, "narrow-250.png");
  assert.deepEqual(sideways, [], "no horizontal scroll (scrollWidth <= clientWidth)");
  const cards = await panel.locator(".tool").evaluateAll((els) =>
    els.map((el) => {
      const box = el.querySelector("summary")!.getBoundingClientRect();
      const pill = el.querySelector(".status")!.getBoundingClientRect();
      return { title: Math.round(el.querySelector(".tool-title")!.getBoundingClientRect().width), pillInside: pill.right <= box.right + 0.5 };
    }),
  );
  assert.ok(cards.length >= 2, "the turn's tool cards are shown");
  for (const card of cards) assert.ok(card.title >= 40 && card.pillInside, `a title of ${card.title} px, the pill inside: ${card.pillInside}`);
});
