// Loaded first by the server (`node --require`, deploy/node_flags.mjs): serves each module of the
// project whose text deploy/strip_types.mjs stripped of its types (the same text, by its SHA-256)
// from that cache, so Node's own type stripper is never loaded. Anything else, and every module
// when there is no cache, loads as Node loads it. CommonJS, as src/runtime/sea_main.cjs: it runs
// before any module of the project.
"use strict";
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");
const { registerHooks } = require("node:module");
const { join } = require("node:path");
const { fileURLToPath, pathToFileURL } = require("node:url");

const root = pathToFileURL(join(__dirname, "..", "..", "/")).href;

/** Stripped texts by the SHA-256 of the module's text; each is dropped once served. */
const stripped = (() => {
  try {
    const cache = new URL("node_modules/.cache/vestibule/modules.json", root);
    return new Map(Object.entries(JSON.parse(readFileSync(cache, "utf8"))));
  } catch {
    return new Map();
  }
})();

if (stripped.size > 0) {
  registerHooks({
    load(url, context, next) {
      if (!url.startsWith(root) || !url.endsWith(".ts") || url.includes("/node_modules/")) {
        return next(url, context);
      }
      const text = readFileSync(fileURLToPath(url), "utf8");
      const hash = createHash("sha256").update(text).digest("hex");
      const source = stripped.get(hash);
      if (source === undefined) return next(url, context);
      stripped.delete(hash);
      return { format: "module", source, shortCircuit: true };
    },
  });
}
