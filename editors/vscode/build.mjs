// Builds the extension (dist/extension.js, with vscode-languageclient bundled in), copies the
// shared panel bundle into dist/webview/, and with --tests builds out/test/**.test.js.
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnSync } from "node:child_process";

const here = dirname(fileURLToPath(import.meta.url));
const webview = join(here, "..", "webview");

async function buildExtension() {
  const panel = spawnSync(process.execPath, [join(webview, "build.mjs")], { stdio: "inherit" });
  if (panel.status !== 0) process.exit(panel.status ?? 1);
  rmSync(join(here, "dist", "webview"), { recursive: true, force: true });
  mkdirSync(join(here, "dist", "webview"), { recursive: true });
  for (const file of ["panel.js", "panel.css"]) cpSync(join(webview, "dist", file), join(here, "dist", "webview", file));
  await build({
    entryPoints: [join(here, "src", "extension.ts")],
    outfile: join(here, "dist", "extension.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  });
}

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
  );
}

async function buildTests() {
  const out = join(here, "out", "test");
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: testFiles(join(here, "test")),
    outdir: out,
    outbase: join(here, "test"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode", "playwright-core"],
    sourcemap: "inline",
    logLevel: "warning",
  });
}

if (process.argv.includes("--tests")) await buildTests();
else await buildExtension();
