// What a tool card shows of a call's input and output, by what the call did: a command as a
// terminal with its exit code, a file read as an excerpt with line numbers, an edit as its diff;
// JSON only for tools that have nothing better.
import { proposal } from "./ask";
import { h } from "./dom";
import type { ToolItem } from "./model";
import { pre, section, type Actions } from "./parts";

type Json = Record<string, unknown>;

function parsed(text: string | undefined): Json | undefined {
  if (!text || !text.trimStart().startsWith("{")) return undefined;
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function command(item: ToolItem): string | undefined {
  const value = item.input.command;
  return typeof value === "string" ? value : undefined;
}

const READ_KEYS = new Set(["path", "offset", "limit"]);

/** The input, unless the title, the diff or the terminal already says it. */
export function inputView(item: ToolItem, actions: Actions): HTMLElement | null {
  const keys = Object.keys(item.input);
  if (!keys.length || item.ask) return null;
  if (command(item) !== undefined && keys.every((k) => ["command", "timeout", "description", "cwd"].includes(k))) return null;
  if (item.toolKind === "read" && keys.every((k) => READ_KEYS.has(k))) return null;
  const proposed = item.diff ? null : proposal(item, actions);
  if (proposed && command(item) === undefined) return section("Proposed change", proposed);
  if (item.diff && ("new_string" in item.input || "content" in item.input)) return null;
  return section("Input", pre(JSON.stringify(item.input, null, 2)));
}

function terminal(cmd: string | undefined, output: string, exitCode: unknown, truncated: boolean): HTMLElement {
  const code = typeof exitCode === "number" ? exitCode : undefined;
  return h(
    "div",
    { class: "terminal" },
    cmd !== undefined ? h("div", { class: "command" }, `$ ${cmd}`) : null,
    output ? pre(output, "output") : null,
    code !== undefined || truncated
      ? h(
          "div",
          { class: "terminal-foot" },
          code !== undefined ? h("span", { class: `exit-code ${code === 0 ? "ok" : "failing"}` }, `exit code ${code}`) : null,
          truncated ? h("span", { class: "truncated" }, "only the end of the output is kept") : null,
        )
      : null,
  );
}

const NUMBERED = /^(\d+): (?:[0-9a-f]{2,8}\| )?(.*)$/;

function excerpt(result: Json): HTMLElement | null {
  const content = result.content;
  if (typeof content !== "string") return null;
  const rows = content ? content.split("\n") : [];
  const body = h("div", { class: "excerpt-body", role: "table" });
  for (const row of rows) {
    const match = NUMBERED.exec(row) ?? /^(\d+):$/.exec(row);
    body.appendChild(h("div", { class: "excerpt-row", role: "row" }, h("span", { class: "ln" }, match?.[1] ?? ""), h("span", { class: "code-line" }, match ? (match[2] ?? "") : row)));
  }
  const range = typeof result.startLine === "number" && typeof result.endLine === "number" ? `lines ${result.startLine}–${result.endLine}` : "";
  const total = typeof result.totalLines === "number" ? ` of ${result.totalLines}` : "";
  const note = typeof result.note === "string" ? result.note : "";
  return h("div", { class: "excerpt" }, h("div", { class: "excerpt-head" }, [range + total, note].filter(Boolean).join(" · ")), rows.length ? body : null);
}

/** The output as the user reads it; null when there is none or the diff says it all. */
export function outputView(item: ToolItem): HTMLElement | null {
  if (!item.output) return null;
  const label = item.status === "in_progress" ? "Output (live)" : "Output";
  const result = parsed(item.output);
  if (item.name === "ask_user_question" && typeof result?.summary === "string") return section(label, pre(result.summary, "output"));
  if (result && typeof result.output === "string" && "exitCode" in result) {
    return section(label, terminal(command(item), result.output, result.exitCode, result.truncated === true));
  }
  if (!result && (command(item) !== undefined || item.toolKind === "execute")) return section(label, terminal(command(item), item.output, undefined, false));
  if (result && "content" in result && "totalLines" in result) return section("File", excerpt(result) ?? pre(item.output, "output"));
  if (item.diff && result) return null;
  return section(label, pre(result ? JSON.stringify(result, null, 2) : item.output, "output"));
}
