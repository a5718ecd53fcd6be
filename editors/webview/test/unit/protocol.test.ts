import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../fixtures";

test("editors/protocol/protocol.ts is fresh (generated from protocol/schema/agentls.schema.json)", () => {
  const run = spawnSync(process.execPath, [join(repoRoot(), "editors", "protocol", "generate.mjs"), "--check"], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr || run.stdout);
});
