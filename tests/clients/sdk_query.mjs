// Drives agentls through the TypeScript Claude Agent SDK's query(), unmodified.
// argv[2]: a JSON plan {executable, cwd, env, prompt?, turns?, options?, permissions?, sdkServer?}:
// sdkServer names an in-process MCP server (createSdkMcpServer) with one tool, add(a, b);
// hooks: {Event: {matcher?, output}}: one hook per event answering `output` (each call is
// printed as a "hook" event).
// Prints one JSON line per event: {event: "message"|"permission"|"init"|"interrupt"|"error"|"done", ...}.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const plan = JSON.parse(process.argv[2]);
const say = (event, data) => process.stdout.write(JSON.stringify({ event, ...data }) + "\n");

// permissions: tool name -> "allow" | "always" | "deny" | {answers: {...}} (AskUserQuestion).
async function canUseTool(toolName, input, options) {
  const rule = (plan.permissions || {})[toolName] ?? "deny";
  say("permission", {
    toolName,
    input,
    toolUseID: options.toolUseID,
    suggestions: options.suggestions ?? null,
    given: Object.keys(options).filter((key) => options[key] !== undefined && options[key] !== null),
  });
  if (rule === "allow") return { behavior: "allow", updatedInput: input };
  if (rule === "always") {
    return { behavior: "allow", updatedInput: input, updatedPermissions: options.suggestions ?? [] };
  }
  if (typeof rule === "object" && rule.updatedInput) {
    return { behavior: "allow", updatedInput: { ...input, ...rule.updatedInput } };
  }
  if (typeof rule === "object" && rule.answers) {
    return { behavior: "allow", updatedInput: { ...input, answers: rule.answers } };
  }
  return { behavior: "deny", message: "denied by the test host" };
}

function userMessage(text) {
  return { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
}

// Streaming input: the next turn's prompt is sent once the previous turn's result arrived.
function promptQueue() {
  const waiting = [];
  const ready = [];
  let closed = false;
  return {
    push(message) {
      const next = waiting.shift();
      if (next) next({ value: message, done: false });
      else ready.push(message);
    },
    close() {
      closed = true;
      for (const next of waiting.splice(0)) next({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return {
        next() {
          if (ready.length) return Promise.resolve({ value: ready.shift(), done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => waiting.push(resolve));
        },
      };
    },
  };
}

async function main() {
  const options = {
    pathToClaudeCodeExecutable: plan.executable,
    cwd: plan.cwd,
    env: plan.env,
    stderr: (text) => process.stderr.write(text),
    ...(plan.permissions ? { canUseTool } : {}),
    ...(plan.options || {}),
  };
  if (plan.hooks) {
    options.hooks = Object.fromEntries(
      Object.entries(plan.hooks).map(([event, spec]) => [
        event,
        [
          {
            matcher: spec.matcher,
            hooks: [
              async (input, toolUseID) => {
                say("hook", { input, toolUseID: toolUseID ?? null });
                return spec.output;
              },
            ],
          },
        ],
      ]),
    );
  }
  if (plan.sdkServer) {
    const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
      say("tool", { name: "add", args: { a, b } });
      return { content: [{ type: "text", text: String(a + b) }] };
    });
    const server = createSdkMcpServer({ name: plan.sdkServer, version: "1.0.0", tools: [add] });
    options.mcpServers = { ...(options.mcpServers || {}), [plan.sdkServer]: server };
  }
  const turns = plan.turns || [];
  const queue = turns.length ? promptQueue() : null;
  const q = query({ prompt: queue ?? plan.prompt, options });
  let turn = 0;
  let interrupted = false;
  const startTurn = async () => {
    const spec = turns[turn];
    if (spec.setModel) await q.setModel(spec.setModel);
    queue.push(userMessage(spec.prompt));
  };
  if (queue) {
    await startTurn();
    say("init", { result: await q.initializationResult() });
  }
  for await (const message of q) {
    say("message", { message });
    const spec = turns[turn];
    if (
      spec?.interruptOnDelta &&
      !interrupted &&
      message.type === "stream_event" &&
      message.event.type === "content_block_delta"
    ) {
      interrupted = true;
      say("interrupt", { response: (await q.interrupt()) ?? null });
    }
    if (queue && message.type === "result") {
      turn += 1;
      interrupted = false;
      if (turn < turns.length) await startTurn();
      else queue.close();
    }
  }
  say("done", {});
}

main().catch((error) => {
  say("error", { message: String(error?.stack ?? error) });
  process.exitCode = 1;
});
