// An ACP client built on the ACP TypeScript SDK (`client()` of @agentclientprotocol/sdk), run by
// tests/test_acp_ts_sdk.py. It spawns the agent command given in AGENTLS_ACP_COMMAND (a JSON
// array), plays one scenario given as a JSON argument, and prints one JSON line per event:
// {event: "update" | "permission" | "read" | "write" | "elicitation" | "response" | "error", ...}.
//
// Scenario keys: cwd, prompt, caps (clientCapabilities), load (a session id to load instead of
// creating one), buffers ({path: text} the editor serves over fs/read_text_file), pick (the
// permission option to choose: an optionId, or "first"), answers (form content to accept),
// cancelOn (an update kind: send session/cancel when the first one arrives).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const scenario = JSON.parse(process.argv[2]);
const command = JSON.parse(process.env.AGENTLS_ACP_COMMAND);
const emit = (event, data) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");

const agent = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const buffers = { ...(scenario.buffers ?? {}) };
let sessionId = scenario.load ?? null;
let cancelled = false;

const app = client({ name: "agentls-tests" })
  .onNotification(methods.client.session.update, ({ params, agent: peer }) => {
    emit("update", { update: params.update });
    const kind = params.update.sessionUpdate;
    if (scenario.cancelOn === kind && !cancelled) {
      cancelled = true;
      peer.notify(methods.agent.session.cancel, { sessionId: params.sessionId });
    }
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    emit("permission", { request: params });
    const optionId = scenario.pick === "first" ? params.options[0].optionId : scenario.pick;
    return { outcome: { outcome: "selected", optionId } };
  })
  .onRequest(methods.client.fs.readTextFile, ({ params }) => {
    emit("read", { path: params.path });
    if (!(params.path in buffers)) throw new Error(`no buffer for ${params.path}`);
    return { content: buffers[params.path] };
  })
  .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
    emit("write", { path: params.path, content: params.content });
    buffers[params.path] = params.content;
    return {};
  })
  .onRequest(methods.client.elicitation.create, ({ params }) => {
    emit("elicitation", { request: params });
    return { action: "accept", content: scenario.answers };
  });

try {
  await app.connectWith(stream, async (ctx) => {
    await ctx.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: scenario.caps ?? {},
      clientInfo: { name: "agentls-tests", version: "0" },
    });
    if (sessionId) {
      const loaded = await ctx.request(methods.agent.session.load, {
        sessionId,
        cwd: scenario.cwd,
        mcpServers: [],
      });
      emit("response", { method: "session/load", result: loaded });
    } else {
      const created = await ctx.request(methods.agent.session.new, {
        cwd: scenario.cwd,
        mcpServers: [],
      });
      sessionId = created.sessionId;
      emit("response", { method: "session/new", result: created });
    }
    if (scenario.prompt) {
      const result = await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: scenario.prompt }],
      });
      emit("response", { method: "session/prompt", result });
    }
  });
} catch (error) {
  emit("error", { message: String(error?.message ?? error) });
  process.exitCode = 1;
} finally {
  agent.stdin.end();
  await new Promise((resolve) => (agent.exitCode !== null ? resolve() : agent.on("exit", resolve)));
}
