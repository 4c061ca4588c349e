// The server loads its five runtime dependencies and nothing else: the MCP SDKs, oauth4webapi
// and playwright are test-only peers (DESIGN.md "Stack") and must stay out of main.ts's graph.
import assert from "node:assert/strict";

Deno.test("main.ts loads only jose, nodemailer, postgres, valibot and @valibot/to-json-schema from npm", async () => {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(info.success, new TextDecoder().decode(info.stderr));
  const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    modules: { specifier: string }[];
  };
  // A package imported through several of its entry points (jose's subpaths) counts once.
  const packages = [
    ...new Set(graph.modules.map((module) => /^npm:\/(@?[^@]+)@/.exec(module.specifier)?.[1])),
  ].filter((name) => name !== undefined).sort();
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
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../main.ts", import.meta.url).pathname],
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
      // Static imports only: `import type` has no `code`, `import()` is dynamic.
      if (dependency.code && !dependency.isDynamic) visit(dependency.code.specifier);
    }
  };
  for (const root of graph.roots) visit(root);
  const unwanted = [...loaded].filter((s) =>
    /nodemailer|\/src\/admin\/|\/src\/mail\/smtp\.ts$|^npm:\/jose@[^/]+$/.test(s)
  );
  assert.deepEqual(unwanted, []);
  assert.ok(
    [...loaded].some((s) => /^npm:\/jose@.*\/jwt\/verify$/.test(s)),
    "the walk reaches npm packages",
  );
});
