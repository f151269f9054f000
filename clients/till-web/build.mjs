// Builds the till's assets into crates/till-api/src/till/assets, where the binary embeds them:
// app.js (src/main.ts with clients/typescript's modules, minified), app.css, sw.js with the
// shell's list and version, index.html naming app.js and app.css by their digest, the manifest
// and the icons. The same sources always give the same bytes (scripts/till-web-check).
//
//   node build.mjs [outdir]

import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, "../../crates/till-api/src/till/assets");
mkdirSync(out, { recursive: true });

const digest = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);
const common = {
  bundle: true,
  minify: true,
  write: false,
  legalComments: "none",
  charset: "utf8",
  target: ["es2022"],
  logLevel: "warning",
};

const app = await esbuild.build({ ...common, entryPoints: [join(here, "src/main.ts")], format: "esm" });
const js = app.outputFiles[0].contents;
const css = (await esbuild.build({ ...common, entryPoints: [join(here, "static/app.css")], loader: { ".css": "css" } }))
  .outputFiles[0].contents;

const statics = ["manifest.webmanifest", "icon.svg", "icon-192.png", "icon-512.png"];
for (const name of statics) copyFileSync(join(here, "static", name), join(out, name));
writeFileSync(join(out, "app.js"), js);
writeFileSync(join(out, "app.css"), css);

const html = readFileSync(join(here, "static/index.html"), "utf8")
  .replace("@JS@", digest(js))
  .replace("@CSS@", digest(css));
writeFileSync(join(out, "index.html"), html);

const shell = [
  "/till",
  `/till/app.js?v=${digest(js)}`,
  `/till/app.css?v=${digest(css)}`,
  ...statics.map((name) => `/till/${name}`),
];
const version = digest(
  Buffer.concat([Buffer.from(html), ...statics.map((name) => readFileSync(join(here, "static", name)))]),
);
const sw = await esbuild.build({
  ...common,
  entryPoints: [join(here, "src/sw.ts")],
  format: "iife",
  define: { SHELL: JSON.stringify(shell), VERSION: JSON.stringify(version) },
});
writeFileSync(join(out, "sw.js"), sw.outputFiles[0].contents);
console.log(`till-web: built ${out}`);
