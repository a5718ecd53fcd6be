// First run with no model: the user's API key, kept in VS Code's secret storage and passed to
// the server's environment (never to settings.json), or the embedded local model, installed by
// the server itself (`agentls setup-local`) with its progress in a notification, and from then on
// the provider of the servers this editor starts.
// No `vscode` import: the extension passes in the window, the secrets, its state and a process spawner.
import type { ServerCommand } from "./command";

export interface KeyProvider {
  label: string;
  env: string;
  detail: string;
}

export const KEY_PROVIDERS: readonly KeyProvider[] = [
  { label: "Anthropic", env: "ANTHROPIC_API_KEY", detail: "Claude models · console.anthropic.com" },
  { label: "OpenAI", env: "OPENAI_API_KEY", detail: "GPT models · platform.openai.com" },
  { label: "OpenRouter", env: "OPENROUTER_API_KEY", detail: "many providers behind one key · openrouter.ai" },
  { label: "DeepSeek", env: "DEEPSEEK_API_KEY", detail: "platform.deepseek.com" },
  { label: "Qwen (DashScope)", env: "DASHSCOPE_API_KEY", detail: "dashscope.aliyuncs.com" },
  { label: "Moonshot (Kimi)", env: "MOONSHOT_API_KEY", detail: "platform.moonshot.cn" },
  { label: "Volcengine Ark (Doubao)", env: "ARK_API_KEY", detail: "console.volcengine.com/ark" },
];

export interface SecretsLike {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

export function secretName(env: string): string {
  return `agentls.apiKey.${env}`;
}

/** The stored keys as environment variables for the server process. */
export async function keyEnvironment(secrets: SecretsLike): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const p of KEY_PROVIDERS) {
    const value = await secrets.get(secretName(p.env));
    if (value) env[p.env] = value;
  }
  return env;
}

/** The part of VS Code's `Memento` (the extension's global state) used here. */
export interface StateLike {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const LOCAL_CHOICE = "agentls.useLocalModel";

/** The user chose the embedded local model (true) or entered a key (false) in the first-run card. */
export function chooseLocalModel(state: StateLike, local: boolean): PromiseLike<void> {
  return state.update(LOCAL_CHOICE, local || undefined);
}

/**
 * The server's environment from what the user set up here: the stored keys, and the local model
 * as the provider once chosen (over a provider that has no key, which is what showed the card).
 */
export async function serverEnvironment(secrets: SecretsLike, state: StateLike): Promise<Record<string, string>> {
  const env = await keyEnvironment(secrets);
  return state.get<boolean>(LOCAL_CHOICE) ? { ...env, AGENTLS_PROVIDER: "local" } : env;
}

export async function forgetKeys(secrets: SecretsLike): Promise<void> {
  for (const p of KEY_PROVIDERS) await secrets.delete(secretName(p.env));
}

export interface KeyWindow {
  showQuickPick<T extends { label: string }>(items: T[], options: { title: string; placeHolder: string; ignoreFocusOut: boolean }): PromiseLike<T | undefined>;
  showInputBox(options: { title: string; prompt: string; password: boolean; ignoreFocusOut: boolean; validateInput(value: string): string | undefined }): PromiseLike<string | undefined>;
}

/** Pick a provider and type its key; true when a key was stored. */
export async function enterKey(win: KeyWindow, secrets: SecretsLike): Promise<boolean> {
  const provider = await win.showQuickPick([...KEY_PROVIDERS], { title: "agentls: API key", placeHolder: "Whose key is it?", ignoreFocusOut: true });
  if (!provider) return false;
  const key = await win.showInputBox({
    title: `agentls: ${provider.label} API key`,
    prompt: `Kept in VS Code's secret storage and passed to agentls as ${provider.env}; never written to settings.`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (/\s/.test(value.trim()) || !value.trim() ? "Paste the key itself: one word, no spaces." : undefined),
  });
  if (!key?.trim()) return false;
  await secrets.store(secretName(provider.env), key.trim());
  return true;
}

/** `agentls setup-local` with the interpreter and arguments that start this server. */
export function setupLocalCommand(command: ServerCommand): ServerCommand {
  const serve = command.args.indexOf("serve");
  const head = serve >= 0 ? command.args.slice(0, serve) : [];
  return { ...command, args: [...head, "setup-local"] };
}

export type SetupLine = { kind: "progress"; done: number; total: number; name: string } | { kind: "done"; text: string } | { kind: "failed"; text: string };

/** One line of `agentls setup-local`'s stdout. */
export function setupLine(line: string): SetupLine | undefined {
  const progress = /^progress (\d+)\/(\d+) (.*)$/.exec(line.trim());
  if (progress) return { kind: "progress", done: Number(progress[1]), total: Number(progress[2]), name: progress[3] };
  const end = /^(done|failed): (.*)$/.exec(line.trim());
  if (end) return { kind: end[1] as "done" | "failed", text: end[2] };
  return undefined;
}
