// The server loads its five runtime dependencies and nothing else: the MCP SDKs, oauth4webapi
// and playwright are test-only peers (DESIGN.md "Stack") and must stay out of main.ts's graph.
import assert from "node:assert/strict";

Deno.test("main.ts loads only jose, nodemailer, postgres, valibot and @valibot/to-json-schema from npm", async () => {
  // Whatever main.ts may load, dynamic imports included; `import type` (otel.ts's) loads nothing.
  const loaded = await loadedModules({ dynamic: true });
  // A package imported through several of its entry points (jose's subpaths) counts once.
  const packages = [...new Set([...loaded].map((s) => /^npm:\/(@?[^@]+)@/.exec(s)?.[1]))]
    .filter((name) => name !== undefined).sort();
  assert.deepEqual(packages, [
    "@valibot/to-json-schema",
    "jose",
    "nodemailer",
    "postgres",
    "valibot",
  ]);
});

// `deno run` installs every npm package its lock file names, so the lock of `deno task start`
// holds the runtime packages only; the test and bench tasks use tests/test.lock.
Deno.test("deno.lock, the lock of deno task start, names the runtime packages only", async () => {
  const lock = JSON.parse(await Deno.readTextFile(new URL("../deno.lock", import.meta.url))) as {
    npm: Record<string, unknown>;
  };
  const names = Object.keys(lock.npm).map((key) => key.slice(0, key.indexOf("@", 1))).sort();
  assert.deepEqual(names, ["@valibot/to-json-schema", "jose", "nodemailer", "postgres", "valibot"]);
});

// What the server loads at start-up is what it holds in memory all its life: nodemailer alone
// is about 18 MiB of resident memory, so it (with the SMTP transport) and the admin commands
// are imported only when used: SMTP configured, `vestibule admin …` run. jose is imported by
// the entry points of what the server does (signing, verifying, keys): its index loads all 46
// of its modules, encryption and remote key sets included, about 1.5 MiB more.
Deno.test("main.ts loads nodemailer, the admin commands and jose's index only when they are used", async () => {
  const loaded = await loadedModules({ dynamic: false });
  const unwanted = [...loaded].filter((s) =>
    /nodemailer|\/src\/admin\/|\/src\/mail\/smtp\.ts$|^npm:\/jose@[^/]+$/.test(s)
  );
  assert.deepEqual(unwanted, []);
  assert.ok(
    [...loaded].some((s) => /^npm:\/jose@.*\/jwt\/verify$/.test(s)),
    "the walk reaches npm packages",
  );
});

// The tracing packages are pinned once, in src/tracing/packages.ts: package.json installs exactly
// those for Node.js (as optional dependencies), otel.ts's type imports name the same versions,
// deno.json's import map names none (Deno would fetch them at every first start), and the
// compile task embeds them.
Deno.test("the OpenTelemetry packages are pinned in one table that package.json and otel.ts follow", async () => {
  const { OTEL_PACKAGES } = await import("../src/tracing/packages.ts");
  const read = (path: string) => Deno.readTextFile(new URL(`../${path}`, import.meta.url));
  const manifest = JSON.parse(await read("package.json")) as {
    dependencies: Record<string, string>;
    optionalDependencies: Record<string, string>;
  };
  assert.deepEqual(manifest.optionalDependencies, OTEL_PACKAGES);
  assert.deepEqual(Object.keys(manifest.dependencies).filter((n) => n in OTEL_PACKAGES), []);
  const config = JSON.parse(await read("deno.json"));
  assert.deepEqual(Object.keys(config.imports).filter((n) => n.startsWith("@opentelemetry/")), []);
  // `deno task compile` embeds them: nothing in main.ts's graph names them.
  const included = [...config.tasks.compile.matchAll(/--include npm:(@[^@\s]+)@(\S+)/g)];
  assert.deepEqual(
    Object.fromEntries(included.map(([, name, version]) => [name, version])),
    OTEL_PACKAGES,
  );
  const typed = [...(await read("src/tracing/otel.ts")).matchAll(/"npm:(@[^@"]+)@([^"]+)"/g)];
  assert.deepEqual(
    Object.fromEntries(typed.map(([, name, version]) => [name, version]).sort()),
    OTEL_PACKAGES,
  );
});

/** The modules main.ts's code imports, followed from its roots (`import type` has no `code`). */
async function loadedModules(options: { dynamic: boolean }): Promise<Set<string>> {
  // --no-lock: deno info would otherwise write what it resolves into deno.lock.
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--no-lock", new URL("../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(info.success, new TextDecoder().decode(info.stderr));
  const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    roots: string[];
    redirects: Record<string, string>;
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
    }[];
  };
  const modules = new Map(graph.modules.map((module) => [module.specifier, module]));
  const loaded = new Set<string>();
  const visit = (specifier: string) => {
    const resolved = graph.redirects[specifier] ?? specifier;
    if (loaded.has(resolved)) return;
    loaded.add(resolved);
    for (const dependency of modules.get(resolved)?.dependencies ?? []) {
      if (dependency.code && (options.dynamic || !dependency.isDynamic)) {
        visit(dependency.code.specifier);
      }
    }
  };
  for (const root of graph.roots) visit(root);
  return loaded;
}
