// Drives claude-agent-acp (unmodified) over ACP with the ACP TypeScript SDK's client; the adapter
// runs agentls as its Claude Code executable (CLAUDE_CODE_EXECUTABLE in plan.env).
// argv[2]: a JSON plan {cwd, env, permission, adapter?, prompts: [{text, cancelOn?}]}: cancelOn
// names the session update kind (e.g. agent_message_chunk) whose first arrival cancels that
// prompt; adapter is the package to run (default @zed-industries/claude-agent-acp).
// Prints one JSON line per event: {event: "update"|"permission"|"response"|"error"|"done", ...}.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const plan = JSON.parse(process.argv[2]);
const say = (event, data) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");
const require = createRequire(import.meta.url);
const adapter = require.resolve(`${plan.adapter ?? "@zed-industries/claude-agent-acp"}/dist/index.js`);

const child = spawn(process.execPath, [adapter], {
  cwd: plan.cwd,
  env: plan.env,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let onUpdate = null;
const app = client({ name: "agentls-tests" })
  .onNotification(methods.client.session.update, async ({ params }) => {
    say("update", { update: params.update });
    if (onUpdate) onUpdate(params.update.sessionUpdate);
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    say("permission", { request: params });
    const wanted = plan.permission ?? "reject";
    const option = params.options.find((o) => o.optionId === wanted || o.kind === wanted);
    return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
  });

async function run(agent) {
  await agent.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const session = await agent.request(methods.agent.session.new, { cwd: plan.cwd, mcpServers: [] });
  say("session", { session });
  for (const prompt of plan.prompts) {
    onUpdate = prompt.cancelOn
      ? (kind) => {
          if (kind !== prompt.cancelOn) return;
          onUpdate = null;
          say("cancel", {});
          agent.notify(methods.agent.session.cancel, { sessionId: session.sessionId });
        }
      : null;
    const response = await agent.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: prompt.text }],
    });
    say("response", { response });
  }
}

try {
  await app.connectWith(stream, run);
  say("done", {});
} catch (error) {
  say("error", { message: String(error?.stack ?? error) });
  process.exitCode = 1;
} finally {
  child.kill();
}
