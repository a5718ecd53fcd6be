import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { findOnPath, resolveServerCommand, splitCommandLine, withConnection } from "../../src/command";
import { RestartPolicy } from "../../src/restart";

test("command lines split like a shell's simple cases", () => {
  assert.deepEqual(splitCommandLine(`/opt/a b/agentls serve`), ["/opt/a", "b/agentls", "serve"]);
  assert.deepEqual(splitCommandLine(`"/opt/a b/python" -m server.cli serve`), ["/opt/a b/python", "-m", "server.cli", "serve"]);
  assert.deepEqual(splitCommandLine(`agentls serve --flag 'x y' ""`), ["agentls", "serve", "--flag", "x y", ""]);
  assert.deepEqual(splitCommandLine("   "), []);
});

test("server command: setting, then PATH, then the Python interpreter", () => {
  assert.deepEqual(resolveServerCommand({ setting: "/v/bin/agentls", onPath: "/usr/bin/agentls", python: "/py" }), { command: "/v/bin/agentls", args: ["serve"], source: "setting" });
  assert.deepEqual(resolveServerCommand({ setting: "py -m server.cli serve --x", onPath: undefined, python: undefined }), { command: "py", args: ["-m", "server.cli", "serve", "--x"], source: "setting" });
  assert.deepEqual(resolveServerCommand({ setting: "", onPath: "/usr/bin/agentls", python: "/py" }), { command: "/usr/bin/agentls", args: ["serve"], source: "path" });
  assert.deepEqual(resolveServerCommand({ setting: "", onPath: undefined, python: "/py" }), { command: "/py", args: ["-m", "server.cli", "serve"], source: "python" });
  assert.equal(resolveServerCommand({ setting: "", onPath: undefined, python: undefined }), undefined);
});

test("findOnPath finds executables only", () => {
  const dir = mkdtempSync(join(tmpdir(), "agentls-path-"));
  writeFileSync(join(dir, "agentls"), "#!/bin/sh\n");
  assert.equal(findOnPath("agentls", { PATH: dir }, "linux"), undefined);
  chmodSync(join(dir, "agentls"), 0o755);
  assert.equal(findOnPath("agentls", { PATH: `/nonexistent:${dir}` }, "linux"), join(dir, "agentls"));
});

test("restart policy: a few restarts per window, then stop", () => {
  const policy = new RestartPolicy(2, 1000);
  assert.equal(policy.allow(0), true);
  assert.equal(policy.allow(10), true);
  assert.equal(policy.allow(20), false);
  assert.equal(policy.allow(5000), true, "old crashes age out");
});

test("agentls.server.connect attaches the command to a resident server", () => {
  const own = { command: "/usr/bin/agentls", args: ["serve"], source: "path" as const };
  assert.deepEqual(withConnection(own, ""), own);
  assert.deepEqual(withConnection(own, " auto "), { ...own, args: ["serve", "--connect"] });
  assert.deepEqual(withConnection(own, "unix:/run/a.sock"), { ...own, args: ["serve", "--connect", "unix:/run/a.sock"] });
  assert.deepEqual(withConnection(own, "tcp://127.0.0.1:7001", "/home/u/.agentls-token"), {
    ...own,
    args: ["serve", "--connect", "tcp://127.0.0.1:7001", "--token-file", "/home/u/.agentls-token"],
  });
});
