// `npm start`'s first step (deploy/node_start.mjs): strips the types of main.ts and src/ once,
// into node_modules/.cache/vestibule/modules.json, which src/runtime/stripped_modules.cjs serves
// to the server's module loader. The server then never loads Node's own type stripper, which
// holds about 17 MiB for the life of the process (docs/benchmarks.md). Each module is keyed by the
// SHA-256 of its text, so an edited one is stripped by Node as it loads. Never in the way of a
// start: without Node's stripper, or where node_modules cannot be written (a read-only image), the
// server starts as it would without it.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import module from "node:module";
import process from "node:process";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cache = join(root, "node_modules", ".cache", "vestibule", "modules.json");

/**
 * Writes the cache; never fails, as the start goes on without it. A module whose text the cache
 * holds already is not stripped again, and an unchanged tree leaves the file as it was (and
 * Node's stripper unloaded).
 */
export function stripTypes() {
  try {
    const paths = [
      "main.ts",
      ...readdirSync(join(root, "src"), { recursive: true })
        .filter((path) => path.endsWith(".ts"))
        .map((path) => join("src", path)),
    ];
    const before = _cached();
    const stripped = {};
    let changed = false;
    for (const path of paths) {
      const text = readFileSync(join(root, path), "utf8");
      const hash = createHash("sha256").update(text).digest("hex");
      if (Object.hasOwn(before, hash)) {
        stripped[hash] = before[hash];
        continue;
      }
      // "strip" blanks the types out, so every line and column (and stack trace) stays where it was.
      stripped[hash] = module.stripTypeScriptTypes(text, { mode: "strip" });
      changed = true;
    }
    // Modules gone since (edited or removed) are dropped with the rewrite.
    if (!changed && Object.keys(before).length === Object.keys(stripped).length) return;
    mkdirSync(dirname(cache), { recursive: true });
    // Whole or not at all: a server starting beside this one reads either file, never half of one.
    const written = `${cache}.${process.pid}`;
    writeFileSync(written, JSON.stringify(stripped));
    renameSync(written, cache);
  } catch {
    // As without the cache: Node strips each module as it loads it.
  }
}

/** The cache as the last start left it; empty when there is none or it cannot be read. */
function _cached() {
  try {
    const held = JSON.parse(readFileSync(cache, "utf8"));
    return typeof held === "object" && held !== null && !Array.isArray(held) ? held : {};
  } catch {
    return {};
  }
}
