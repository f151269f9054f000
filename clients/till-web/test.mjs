// Bundles test/*.test.ts with esbuild for Node and runs them with its test runner.
//
//   node test.mjs

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = mkdtempSync(join(tmpdir(), "till-web-test-"));
try {
  const tests = readdirSync(join(here, "test")).filter((name) => name.endsWith(".test.ts"));
  await esbuild.build({
    entryPoints: tests.map((name) => join(here, "test", name)),
    outdir: out,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: ["node20"],
    logLevel: "warning",
  });
  const files = readdirSync(out).map((name) => join(out, name));
  const run = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(out, { recursive: true, force: true });
}
