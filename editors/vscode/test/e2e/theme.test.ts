// The panel under VS Code's own themes in code-server (Default Light Modern, Default Dark Modern,
// Default High Contrast, Default High Contrast Light): every text and status pill it shows has a
// contrast of at least 4.5:1 with what it is painted on. Also keeps each theme's CSS variables as
// the webview got them (out/e2e-theme/<theme>.json), the source of the panel tests' fixtures
// (editors/webview/test/panel/themes/).
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { FrameLocator, Page } from "playwright-core";
import { lowContrast } from "../../../webview/test/panel/contrast";
import { closeWorkbench, EDITORS, openChat, openWorkbench, sandbox, sendPrompt, snapSidebar, type Sandbox, type Workbench } from "./codeserver";

const VSIX = process.env.AGENTLS_VSIX ?? join(EDITORS, "vscode", "dist", "agentls.vsix");
const ARTIFACTS = join(EDITORS, "vscode", "out", "e2e-theme");
const SCRIPT = [
  { text: "I'll **read** the README first.", toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] },
  { text: "It says:\n\n```python\ndef banner(color: str) -> None:\n    # one line\n    return None  # 42\n```\n\n- a [link](https://example.com)\n- `code`" },
];
/** Each theme (its setting and the name the webview is told), and the file its variables are kept in. */
const THEMES = [
  { theme: "Default Light Modern", label: "Light Modern", file: "light-modern" },
  { theme: "Default Dark Modern", label: "Dark Modern", file: "dark-modern" },
  { theme: "Default High Contrast", label: "Dark High Contrast", file: "hc-black" },
  { theme: "Default High Contrast Light", label: "Light High Contrast", file: "hc-light" },
];

let box: Sandbox;
const wb: Partial<Workbench> = {};
let page: Page;
let panel: FrameLocator;

/** The theme picked as a user does: F1, "Preferences: Color Theme", the theme's name. */
async function pickTheme(label: string): Promise<void> {
  const quick = page.locator(".quick-input-widget");
  const rows = quick.locator(".monaco-list-row");
  await page.locator(".part.statusbar").click();
  await page.keyboard.press("F1");
  // Not the shared runCommand: other commands match "Color Theme" and may come first.
  await quick.locator("input").fill(">Preferences: Color Theme");
  await rows.filter({ hasText: /^Preferences: Color Theme/ }).first().click();
  await quick.locator("input").fill(label);
  await rows.filter({ has: page.locator(".label-name", { hasText: new RegExp(`^${label}$`) }) }).click();
  await quick.waitFor({ state: "hidden" });
}

before(async () => {
  box = sandbox(SCRIPT);
  writeFileSync(join(box.workspace, "README.md"), "# Demo\n\nA banner.\n");
  const settingsPath = join(box.userDataDir, "User", "settings.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  writeFileSync(settingsPath, JSON.stringify({ ...settings, "workbench.colorTheme": THEMES[0].theme }, null, 2));
  ({ page } = await openWorkbench(box, VSIX, wb));
});

after(() => closeWorkbench(wb, box, ARTIFACTS));

test("a turn with a tool card and code is shown in the panel", async () => {
  panel = await openChat(page);
  await sendPrompt(panel, "What does the README say?");
  await panel.locator("[data-kind=turn][data-terminal=completed]").waitFor();
  await panel.locator(".tool summary").first().click();
});

for (const { theme, label, file } of THEMES) {
  test(`under ${theme}, text and status pills in the panel have a contrast of at least 4.5:1`, async () => {
    if (theme !== THEMES[0].theme) await pickTheme(label);
    // The webview's body names the theme once its colours are applied.
    await panel.locator(`body[data-vscode-theme-name="${label}"]`).waitFor({ state: "attached" });
    const variables = await panel.locator("html").evaluate((el) => {
      const style = (el as HTMLElement).style;
      return Object.fromEntries([...Array(style.length).keys()].map((i) => style[i]).filter((n) => n.startsWith("--vscode-")).map((n) => [n, style.getPropertyValue(n).trim()]));
    });
    await snapSidebar(page, ARTIFACTS, `${file}.png`);
    writeFileSync(join(ARTIFACTS, `${file}.json`), JSON.stringify(variables, null, 2) + "\n");
    assert.deepEqual(await panel.locator("body").evaluate(lowContrast, 4.5), []);
  });
}
