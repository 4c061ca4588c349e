// `npm run compile [-- OUTPUT]`: the Node.js single executable ./vestibule (or OUTPUT), from the
// `node` running this script. Every module (main.ts, src/, the npm packages) and static/ go in as
// assets; the executable needs no node_modules, no Deno and no `node` beside it.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { HEAP_FLAGS, permissionFlags } from "./node_flags.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = resolve(process.argv[2] ?? join(root, "vestibule"));
const build = mkdtempSync(join(tmpdir(), "vestibule-compile-"));

/** `node_modules/NAME/` or `node_modules/@SCOPE/NAME/` of a file in a package; "" elsewhere. */
function packageDir(path) {
  return /^node_modules\/(?:@[^/]+\/)?[^/]+\//.exec(path)?.[0] ?? "";
}

/**
 * The file a package's `imports` field maps `specifier` to for Node.js importing ESM (the
 * conditions node, import, default); null when it has none. import.meta.resolve cannot: it
 * resolves from this script, not from the package.
 */
function subpathImport(dir, specifier) {
  const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  let target = manifest.imports?.[specifier];
  while (target !== null && typeof target === "object") {
    const condition = ["node", "import", "default"].find((name) => name in target);
    target = condition === undefined ? null : target[condition];
  }
  return typeof target === "string" ? join(dir, target) : null;
}

/** The files under `dir` (relative to the project), skipping what the executable never loads. */
function files(dir) {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((path) => !/\.(d\.[cm]?ts|map|md)$/.test(path));
}

const assets = {};
for (const path of ["main.ts", ...files("src"), ...files("static")]) {
  assets[path] = join(root, path);
}
// Modules go in with their types stripped (lines and columns kept), so the executable never loads
// Node's type stripper, which would hold about 17 MiB for the life of the process.
for (const path of Object.keys(assets).filter((path) => path.endsWith(".ts"))) {
  const stripped = join(build, "stripped", path);
  mkdirSync(dirname(stripped), { recursive: true });
  writeFileSync(
    stripped,
    stripTypeScriptTypes(readFileSync(assets[path], "utf8"), { mode: "strip" }),
  );
  assets[path] = stripped;
}
// Every installed package of the lock file, not only the direct dependencies: the tracing
// packages import others of their own (@opentelemetry/otlp-transformer, …).
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
const installed = Object.keys(lock.packages).filter((path) =>
  path.startsWith("node_modules/") && !lock.packages[path].dev
);
for (const name of installed) {
  for (const path of files(name)) assets[path] = join(root, path);
}
// Every bare specifier the code imports ("jose", "jose/errors"), resolved here as Node would,
// and the optional dependencies: the tracing packages, imported by a name held in a variable
// (src/tracing/packages.ts), so no text names them as an import.
const optional = Object.keys(
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")).optionalDependencies ?? {},
).map((name) => ["main.ts", name]);
/** The bare specifiers `path`'s text imports, as [path, specifier]. */
function imported(path) {
  const text = readFileSync(join(root, path), "utf8");
  return [...text.matchAll(/(?:from|import)\s*\(?\s*"([^".\/][^"]*)"/g)].map(([, s]) => [path, s]);
}
const packages = {};
const sources = Object.keys(assets).filter((path) => /\.([cm]?js|ts)$/.test(path));
for (const [path, specifier] of [...optional, ...sources.flatMap(imported)]) {
  // A package's own subpath import ("#platform") means a file of that package: keyed by it.
  const key = specifier.startsWith("#") ? `${packageDir(path)}${specifier}` : specifier;
  if (specifier.startsWith("node:") || Object.hasOwn(packages, key)) continue;
  if (specifier.startsWith("#")) {
    const target = subpathImport(packageDir(path), specifier);
    if (target !== null) packages[key] = target;
    continue;
  }
  try {
    const url = import.meta.resolve(specifier, pathToFileURL(join(root, path)).href);
    if (url.startsWith("file:")) packages[key] = relative(root, fileURLToPath(url));
  } catch {
    // A word in a comment or a string that only looks like an import.
  }
}
writeFileSync(join(build, "sea-packages.json"), JSON.stringify(packages));
assets["sea-packages.json"] = join(build, "sea-packages.json");
const config = join(build, "sea-config.json");
writeFileSync(
  config,
  JSON.stringify({
    main: join(root, "src/runtime/sea_main.cjs"),
    output: join(build, "vestibule.blob"),
    disableExperimentalSEAWarning: true,
    // npm start's flags, less the reads of the code: the executable reads its modules and
    // static/ from its own assets, so only ./data is granted, as `deno task compile` grants it.
    // The experimental features it uses are chosen here, not by its operator (the loader of its
    // modules, src/runtime/sea_main.cjs): their warning would be printed on every start.
    execArgv: [
      ...new Set([
        ...HEAP_FLAGS,
        ...permissionFlags(Number(process.versions.node.split(".")[0]), { codeReads: false }),
        "--disable-warning=ExperimentalWarning",
      ]),
    ],
    useCodeCache: false,
    assets,
  }),
);
execFileSync(process.execPath, ["--experimental-sea-config", config], { stdio: "inherit" });
copyFileSync(process.execPath, target);
chmodSync(target, 0o755);
// postject from the npm registry, pinned here rather than in package.json: a package.json
// dependency is one more download for every `deno task start` in a fresh clone.
execFileSync(
  "npx",
  [
    "--yes",
    "postject@1.0.0-alpha.6",
    target,
    "NODE_SEA_BLOB",
    join(build, "vestibule.blob"),
    "--sentinel-fuse",
    "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
  ],
  { stdio: "inherit" },
);
rmSync(build, { recursive: true });
console.log(`wrote ${target}`);
