// Prints the licence of every npm package esbuild put into the bundle (from its metafile).
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const meta = JSON.parse(readFileSync(process.argv[2], "utf8"));
const packages = new Set();
for (const input of Object.keys(meta.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) packages.add(m[1]);
}
for (const name of [...packages].sort()) {
  const dir = join("node_modules", name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
  console.log(`${"=".repeat(72)}\n${name} ${pkg.version} (${pkg.license})\n${"=".repeat(72)}`);
  console.log(file && existsSync(join(dir, file))
    ? readFileSync(join(dir, file), "utf8").trim()
    : `No licence file ships with ${name}; package.json says: ${pkg.license}`);
  console.log();
}
