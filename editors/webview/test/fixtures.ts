// The golden wire examples in protocol/fixtures/, shared with the Python and Java tests.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostToPanel } from "../src/messages";
import type { PromptResult, SessionInfoResult, SessionUpdateParams } from "../../protocol/protocol";

export interface Fixture {
  file: string;
  method: string;
  params: any;
  result?: any;
}

export function repoRoot(start = __dirname): string {
  let dir = start;
  while (!existsSync(join(dir, "protocol", "fixtures"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`protocol/fixtures not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export function fixtures(): Fixture[] {
  const dir = join(repoRoot(), "protocol", "fixtures");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, ...JSON.parse(readFileSync(join(dir, file), "utf8")) }));
}

export function fixture(file: string): Fixture {
  const found = fixtures().find((f) => f.file === file);
  if (!found) throw new Error(`no fixture ${file}`);
  return found;
}

/**
 * Every `session/update` fixture in `seq` order, renumbered 1, 2, 3… (each fixture is a
 * stand-alone example, so two may share a seq; a live session never does).
 */
export function updateFixtures(): SessionUpdateParams[] {
  return fixtures()
    .filter((f) => f.method === "session/update")
    .sort((a, b) => a.params.seq - b.params.seq || a.file.localeCompare(b.file))
    .map((f, i) => ({ ...(f.params as SessionUpdateParams), seq: i + 1 }));
}

/** The golden transcript as the host sends it: the session, every update, the prompt result. */
export function goldenTranscript(): HostToPanel[] {
  const session = fixture("session_new.json").result as SessionInfoResult;
  const result = fixture("session_prompt.json").result as PromptResult;
  return [
    { type: "server", state: "ready" },
    { type: "session", session, cwd: "/home/ada/project" },
    ...updateFixtures().map((params) => ({ type: "update" as const, params })),
    { type: "promptResult", result },
  ];
}
