// The entry of the Node.js single executable (`npm run compile`, deploy/compile_node.mjs): every
// module and static/ file is an asset of the executable, served to Node's module loader under
// `sea:/` URLs; `.ts` modules went in with their types stripped (deploy/compile_node.mjs).
"use strict";
const { isBuiltin, registerHooks } = require("node:module");
const sea = require("node:sea");
const process = require("node:process");
const vm = require("node:vm");

const ROOT = "sea:/";
/** Bare specifiers (the npm packages) to the asset that is their entry module. */
const packages = JSON.parse(sea.getAsset("sea-packages.json", "utf8"));

registerHooks({
  resolve(specifier, context, next) {
    if (Object.hasOwn(packages, specifier)) {
      return { url: ROOT + packages[specifier], shortCircuit: true };
    }
    // Packages name built-ins without `node:` ("util"), which Node resolves from a file: URL only.
    if (isBuiltin(specifier)) {
      return {
        url: specifier.startsWith("node:") ? specifier : `node:${specifier}`,
        shortCircuit: true,
      };
    }
    // A package's subpath import ("#platform"), keyed by the package that imports it.
    if (specifier.startsWith("#") && context.parentURL?.startsWith(ROOT)) {
      const path = context.parentURL.slice(ROOT.length);
      const dir = /^node_modules\/(?:@[^/]+\/)?[^/]+\//.exec(path)?.[0] ?? "";
      if (Object.hasOwn(packages, dir + specifier)) {
        return { url: ROOT + packages[dir + specifier], shortCircuit: true };
      }
    }
    if (context.parentURL?.startsWith(ROOT) && /^\.{1,2}\//.test(specifier)) {
      return { url: new URL(specifier, context.parentURL).href, shortCircuit: true };
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (!url.startsWith(ROOT)) return next(url, context);
    const name = url.slice(ROOT.length);
    const text = sea.getAsset(name, "utf8");
    if (name.endsWith(".json")) return { format: "json", source: text, shortCircuit: true };
    return { format: "module", source: text, shortCircuit: true };
  },
});

// The main script's own import() loads built-in modules only from Node.js 26 on; a function
// compiled with the main context's default loader imports through the hooks above on 24 and 26.
const importModule = vm.compileFunction("return import(specifier)", ["specifier"], {
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
importModule(ROOT + "main.ts")
  .then((main) => main.run(process.argv.slice(2)))
  .then((code) => process.exit(code));
