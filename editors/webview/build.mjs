// Builds the panel bundle (dist/panel.js, dist/panel.css, dist/index.html template) and, with
// --tests, the test files (out/test/**.test.js) that node's test runner executes.
import { build } from "esbuild";
import { mkdirSync, readdirSync, copyFileSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");

async function buildPanel() {
  mkdirSync(dist, { recursive: true });
  await build({
    entryPoints: [join(here, "src", "main.ts")],
    outfile: join(dist, "panel.js"),
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
  });
  copyFileSync(join(here, "src", "panel.css"), join(dist, "panel.css"));
  // A template for hosts that do not run our TypeScript (JetBrains): fill the {{…}} fields.
  const { panelHtml } = await import(await bundleForNode(join(here, "src", "html.ts"), join(here, "out", "html.mjs")));
  writeFileSync(
    join(dist, "index.html"),
    panelHtml({ scriptUri: "{{scriptUri}}", styleUri: "{{styleUri}}", nonce: "{{nonce}}", cspSource: "{{cspSource}}" }),
  );
}

async function bundleForNode(entry, outfile) {
  await build({ entryPoints: [entry], outfile, bundle: true, platform: "node", format: "esm", logLevel: "warning" });
  return outfile;
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
    external: ["playwright-core", "json-schema-to-typescript"],
    sourcemap: "inline",
    logLevel: "warning",
  });
}

if (process.argv.includes("--tests")) await buildTests();
else await buildPanel();
