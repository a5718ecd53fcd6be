// Which command starts the server: the `agentls.serverCommand` setting, else `agentls` on PATH,
// else the Python extension's interpreter with `-m server.cli serve`. Pure, for unit tests.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where it came from, for the output channel and error messages. */
  source: "setting" | "path" | "python";
}

/** Split a command line the way a POSIX shell would for simple cases: spaces, quotes, backslashes. */
export function splitCommandLine(line: string): string[] {
  const args: string[] = [];
  let current = "";
  let quote: string | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < line.length && '"\\'.includes(line[i + 1])) current += line[++i];
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (/\s/.test(ch)) {
      if (started) args.push(current);
      current = "";
      started = false;
    } else if (ch === "\\" && i + 1 < line.length && process.platform !== "win32") {
      current += line[++i];
      started = true;
    } else {
      current += ch;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}

export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string | undefined {
  const exts = platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = join(dir, name + ext.toLowerCase());
      try {
        accessSync(candidate, platform === "win32" ? constants.F_OK : constants.X_OK);
        return candidate;
      } catch {
        /* next */
      }
    }
  }
  return undefined;
}

export interface Resolution {
  setting: string;
  onPath: string | undefined;
  python: string | undefined;
}

/** A setting with only a program gets `serve` appended; otherwise it is used as written. */
export function resolveServerCommand(r: Resolution): ServerCommand | undefined {
  const parts = splitCommandLine(r.setting.trim());
  if (parts.length) {
    const [command, ...args] = parts;
    return { command, args: args.length ? args : ["serve"], source: "setting" };
  }
  if (r.onPath) return { command: r.onPath, args: ["serve"], source: "path" };
  if (r.python) return { command: r.python, args: ["-m", "server.cli", "serve"], source: "python" };
  return undefined;
}

/**
 * The `agentls.server.connect` setting: empty, the server runs as this window's child; `auto`,
 * the window attaches to this user's resident server (started when none runs); an address
 * (`unix:PATH`, `tcp://HOST:PORT`), to the server listening there.
 */
export function withConnection(command: ServerCommand, connect: string, tokenFile = ""): ServerCommand {
  const target = connect.trim();
  if (!target) return command;
  const args = [...command.args, "--connect"];
  if (target !== "auto") args.push(target);
  if (tokenFile.trim()) args.push("--token-file", tokenFile.trim());
  return { ...command, args };
}

export const NOT_FOUND =
  "Cannot find the agentls server. From a checkout of agentls, run ./scripts/serve once (it creates .venv/bin/agentls) " +
  "and set agentls.serverCommand to that path, or install agentls (pip install -e <checkout>) so that `agentls` is on PATH " +
  "or in the Python interpreter VS Code uses.";
