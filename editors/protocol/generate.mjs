// Generates protocol.ts (TypeScript wire types) from protocol/schema/agentls.schema.json.
//
//   node editors/protocol/generate.mjs           rewrite editors/protocol/protocol.ts
//   node editors/protocol/generate.mjs --check   exit 1 when the committed file is stale
//
// The JSON Schema itself is generated from protocol/methods.py (`python -m protocol.schema`).
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
export const SCHEMA_PATH = join(repo, "protocol", "schema", "agentls.schema.json");
export const OUTPUT_PATH = join(here, "protocol.ts");
export const REGENERATE = "npm --prefix editors run gen:protocol";

/** Pydantic titles every property ("Sessionid"); json-schema-to-typescript would name types after them. */
function tidy(node, isDef) {
  if (Array.isArray(node)) return node.map((n) => tidy(n, false));
  if (!node || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "title" && !isDef) continue;
    if (key === "discriminator") continue;
    out[key] = key === "properties" ? mapValues(value, (v) => tidy(v, false)) : tidy(value, false);
  }
  // A tag field (`kind`, `type`) has a default, so pydantic leaves it optional; on the wire it is always there.
  if (out.properties) {
    const tags = Object.entries(out.properties)
      .filter(([, v]) => v && v.const !== undefined)
      .map(([k]) => k);
    if (tags.length) out.required = [...new Set([...(out.required ?? []), ...tags])];
  }
  return out;
}

function mapValues(obj, fn) {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fn(v)]));
}

function refName(ref) {
  return ref.$ref.split("/").pop();
}

/** `{"type": "null"}` (lifecycle messages without params or result) or a `$ref`. */
function typeOf(node) {
  return node.$ref ? refName(node) : "null";
}

function errorTable(schema) {
  const lines = ["/** Every error code, from protocol/errors.py. */", "export const ErrorCode = {"];
  const codes = Object.keys(schema.errors).sort((a, b) => Number(b) - Number(a));
  for (const code of codes) {
    lines.push(`  /** ${schema.errors[code]} */`);
    lines.push(`  ${schema.errorNames[code]}: ${code},`);
  }
  lines.push("} as const;");
  lines.push("export type ErrorCodeName = keyof typeof ErrorCode;");
  lines.push("");
  return lines.join("\n");
}

function methodTables(methods) {
  const entries = Object.entries(methods).sort(([a], [b]) => a.localeCompare(b));
  const constName = (name) =>
    name
      .split(/[/_]/)
      .map((p) => p[0].toUpperCase() + p.slice(1))
      .join("");
  const lines = [];
  lines.push("/** Every method name, from the method table (protocol/methods.py). */");
  lines.push("export const Method = {");
  for (const [name] of entries) lines.push(`  ${constName(name)}: ${JSON.stringify(name)},`);
  lines.push("} as const;");
  lines.push("export type MethodName = (typeof Method)[keyof typeof Method];");
  lines.push("");
  const groups = [
    ["ClientRequests", "client_to_server", false],
    ["ClientNotifications", "client_to_server", true],
    ["ServerRequests", "server_to_client", false],
    ["ServerNotifications", "server_to_client", true],
  ];
  for (const [type, direction, notification] of groups) {
    lines.push(`export interface ${type} {`);
    for (const [name, m] of entries) {
      if (m.direction !== direction || Boolean(m.notification) !== notification) continue;
      lines.push(`  /** ${m.description} */`);
      const params = typeOf(m.params);
      lines.push(
        notification
          ? `  ${JSON.stringify(name)}: ${params};`
          : `  ${JSON.stringify(name)}: { params: ${params}; result: ${typeOf(m.result)} };`,
      );
    }
    lines.push("}");
    lines.push("");
  }
  lines.push("export type SessionUpdate = SessionUpdateParams[\"update\"];");
  lines.push("export type SessionUpdateKindName = SessionUpdate[\"kind\"];");
  lines.push("export type ContentBlock = PromptParams[\"prompt\"][number];");
  lines.push("");
  return lines.join("\n");
}

export async function render() {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));
  const defs = mapValues(schema.$defs, (d) => tidy(d, true));
  for (const [name, def] of Object.entries(defs)) def.title = name;
  const root = {
    title: "AgentlsWireTypes",
    type: "object",
    properties: Object.fromEntries(Object.keys(defs).map((n) => [n, { $ref: `#/$defs/${n}` }])),
    additionalProperties: false,
    $defs: defs,
  };
  const source = relative(repo, SCHEMA_PATH);
  const banner =
    `/* Generated from ${source} by editors/protocol/generate.mjs; do not edit.\n` +
    ` * Regenerate with \`${REGENERATE}\` (after \`python -m protocol.schema\`). */`;
  const types = await compile(root, "AgentlsWireTypes", {
    bannerComment: banner,
    additionalProperties: false,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    format: true,
    style: { printWidth: 100, singleQuote: false },
  });
  const header = `export const PROTOCOL_VERSION = ${JSON.stringify(schema.protocolVersion)};\n\n`;
  return (
    types.replace(/\*\/\n/, `*/\n\n${header}`) +
    "\n" +
    methodTables(schema.methods) +
    "\n" +
    errorTable(schema)
  );
}

async function main() {
  const text = await render();
  if (process.argv.includes("--check")) {
    const current = existsSync(OUTPUT_PATH) ? readFileSync(OUTPUT_PATH, "utf8") : "";
    if (current !== text) {
      console.error(`${relative(repo, OUTPUT_PATH)} is stale; run \`${REGENERATE}\``);
      process.exit(1);
    }
    return;
  }
  writeFileSync(OUTPUT_PATH, text);
  console.log(`wrote ${relative(repo, OUTPUT_PATH)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
