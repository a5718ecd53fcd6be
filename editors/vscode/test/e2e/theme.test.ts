// The panel under VS Code's Default Light Modern theme in code-server: every text and status
// pill it shows has a contrast of at least 4.5:1 with what it is painted on. Also keeps the
// theme's CSS variables as the webview got them (out/e2e-theme/light-modern.json), the source of
// the panel tests' fixture (editors/webview/test/panel/themes/).
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { lowContrast } from "../../../webview/test/panel/contrast";
import { closeWorkbench, EDITORS, openWorkbench, panelFrame, sandbox, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-theme");
const SCRIPT = [
  { text: "I'll **read** the README first.", toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] },
  { text: "It says:\n\n```python\ndef banner(color: str) -> None:\n    # one line\n    return None  # 42\n```\n\n- a [link](https://example.com)\n- `code`" },
];

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;

before(async () => {
  box = sandbox(SCRIPT);
  writeFileSync(join(box.workspace, "README.md"), "# Demo\n\nA banner.\n");
  const settingsPath = join(box.userDataDir, "User", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, "workbench.colorTheme": "Default Light Modern" }, null, 2));
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

test("under Default Light Modern, text and status pills in the panel have a contrast of at least 4.5:1", async () => {
  await page.locator(".activitybar .action-item a[aria-label^='agentls']").click();
  panel = panelFrame(page);
  await panel.locator("#status").getByText("default mode").waitFor();
  const input = panel.getByLabel("Message to the agent");
  await input.click();
  await input.fill("What does the README say?");
  await input.press("Enter");
  await panel.locator("[data-kind=turn][data-terminal=completed]").waitFor();
  await panel.locator(".tool summary").first().click();
  const variables = await panel.locator("html").evaluate((html) => {
    const style = (html as HTMLElement).style;
    return Object.fromEntries([...Array(style.length).keys()].map((i) => style[i]).filter((n) => n.startsWith("--vscode-")).map((n) => [n, style.getPropertyValue(n).trim()]));
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, "light-modern.json"), JSON.stringify(variables, null, 2) + "\n");
  assert.equal(variables["--vscode-foreground"]?.toLowerCase(), "#3b3b3b", "the light theme is applied");
  await page.locator(".part.sidebar").screenshot({ path: join(ARTIFACTS, "light-modern.png") });
  assert.deepEqual(await panel.locator("body").evaluate(lowContrast, 4.5), []);
});
