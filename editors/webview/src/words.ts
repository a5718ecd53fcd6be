// The words the panel uses for outcomes, statuses and token counts.
import type { Usage } from "../../protocol/protocol";

export const BENIGN_NOTES: Record<string, string> = {
  user_not_reachable: "Nobody could answer here; the agent goes on with its best judgement.",
  user_timeout: "No answer in time; the agent goes on with its best judgement.",
  user_rejected: "You declined to answer.",
};

/** ask_user_question answers with `{error: "user_not_reachable" | ...}` when no answer came. */
export function benignNote(tool: { output?: string | null; error?: string | null }): string | undefined {
  for (const text of [tool.output, tool.error]) {
    if (!text) continue;
    const code = outcomeCode(text);
    if (code && BENIGN_NOTES[code]) return BENIGN_NOTES[code];
  }
  return undefined;
}

/** The outcome code a tool result carries (`{error: "user_timeout"}` or the bare word). */
export function outcomeCode(text: string): string | undefined {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && typeof value.error === "string") return value.error;
  } catch {
    const match = /\b(user_not_reachable|user_timeout|user_rejected)\b/.exec(text);
    return match?.[1];
  }
  return undefined;
}

const PERMISSION_WORDS: Record<string, string> = {
  pending: "waiting for your approval",
  allow_once: "allowed once",
  allow_always: "always allowed",
  reject_once: "rejected",
  reject_always: "always rejected",
  cancelled: "not answered",
};

export function permissionWords(outcome: string): string {
  return PERMISSION_WORDS[outcome] ?? outcome;
}

/**
 * Why a call did not run, for the user: the server's text is addressed to the model ("Do not
 * retry it...") and keeps the user's own note after "The user said: ".
 */
/** The user said no (as opposed to: nobody answered in time). */
export function userRejected(error: string | undefined, permission: string | undefined): boolean {
  return permission === "reject_once" || permission === "reject_always" || !!error?.startsWith("The user denied");
}

export function deniedText(error: string | undefined, permission: string | undefined): string {
  const said = error?.match(/The user said: ([\s\S]*)$/)?.[1]?.trim();
  const note = said ? ` Your note: ${said}` : "";
  if (permission === "reject_always") return `You rejected this call and calls like it.${note}`;
  if (permission === "reject_once" || error?.startsWith("The user denied")) return `You rejected this call.${note}`;
  if (error && /did not answer the permission request in time/.test(error)) return "No answer in time; the call was not run.";
  return error || "Not run.";
}

export function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

/** The tokens a turn used; empty when it used none (cancelled before the model answered). */
export function usageText(usage: Usage): string {
  if (!usage.inputTokens && !usage.outputTokens && !usage.cacheReadTokens) return "";
  const parts = [`${fmt(usage.inputTokens ?? 0)} in`, `${fmt(usage.outputTokens ?? 0)} out`];
  if (usage.cacheReadTokens) parts.push(`${fmt(usage.cacheReadTokens)} cached`);
  return `${parts.join(" · ")} tokens`;
}

export const TERMINAL_WORDS: Record<string, string> = {
  completed: "Done",
  aborted: "Cancelled",
  failed: "Failed",
  timed_out: "Timed out",
};

/** What an untrusted folder's config and skills asked for and did not get. */
export function trustWords(ignored: string[]): string {
  return `This folder is not trusted, so its settings were ignored: ${ignored.join("; ")}.`;
}

/** The workspace is the home folder (or above it): every command asks; a project folder would not. */
export function broadWords(cwd: string, ignored: string[]): string {
  const words =
    `agentls is working in ${cwd}, your home folder or a folder above it: every command asks before it runs, ` +
    "and no folder rule trusts it. Open a project folder to let sandboxed commands run unasked.";
  return ignored.length ? `${words} Its settings were ignored: ${ignored.join("; ")}.` : words;
}

export function mcpWords(server: string, status: string, tools?: number, error?: string): string {
  const what = status === "connected" && tools !== undefined ? `connected (${tools} tool${tools === 1 ? "" : "s"})` : status;
  return `MCP server ${server}: ${what}${error ? ` — ${error}` : ""}`;
}

/** A turn the server started because background subagents finished while the session was idle. */
export const REPORT_WORDS = "Background subagents reported back; the agent goes on with their reports.";

/** The question on an inline permission request: "Allow the agent to edit app.py?". */
export function permissionQuestion(title: string): string {
  const what = /^[A-Z][a-z]/.test(title) ? title[0].toLowerCase() + title.slice(1) : title;
  return `Allow the agent to ${what}?`;
}
