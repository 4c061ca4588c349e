// What a first `deno task start` with tracing off puts into an empty Deno cache: the runtime
// packages and no OpenTelemetry one (docs/operating.md "Off costs nothing"). It downloads them
// from the npm registry, a few seconds.
import assert from "node:assert/strict";
import { denoOnly } from "../support/server_runtime.ts";
import { copyProject, originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";

Deno.test(
  "a first `deno task start` with tracing off fetches the runtime packages and no @opentelemetry one",
  {
    ignore: denoOnly(
      "about what Deno fetches into its cache at a first start; Node.js fetches nothing",
    ),
  },
  async () => {
    const dir = await copyProject();
    const cache = await Deno.makeTempDir({ prefix: "vestibule-deno-dir-" });
    try {
      // Deno also fetches what package.json names: the copy has it, as a checkout does.
      for (const name of ["package.json", "package-lock.json"]) {
        await Deno.copyFile(new URL(name, ROOT), `${dir}/${name}`);
      }
      const lock = await Deno.readTextFile(`${dir}/deno.lock`);
      const server = await startServerProcess(dir, {
        ...originsEnv(),
        VESTIBULE_DATA: ":memory:",
        DENO_DIR: cache,
        ...networkEnv(),
      });
      try {
        await server.waitForLine(/"message":"listening"/);
      } finally {
        const { code, stderr } = await server.stop();
        assert.equal(code, 0, stderr);
      }
      const registry = `${cache}/npm/registry.npmjs.org`;
      const fetched: string[] = [];
      for await (const entry of Deno.readDir(registry)) {
        if (!entry.name.startsWith("@")) fetched.push(entry.name);
        else {for await (const inner of Deno.readDir(`${registry}/${entry.name}`)) {
            fetched.push(`${entry.name}/${inner.name}`);
          }}
      }
      assert.deepEqual(fetched.sort(), [
        "@valibot/to-json-schema",
        "jose",
        "nodemailer",
        "postgres",
        "valibot",
      ]);
      assert.equal(await Deno.readTextFile(`${dir}/deno.lock`), lock, "the lock stays as it was");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(cache, { recursive: true });
    }
  },
);

/** How this machine reaches the registry (proxy, certificates), passed on to the child. */
function networkEnv(): Record<string, string> {
  const names = [
    "DENO_CERT",
    "DENO_TLS_CA_STORE",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "NODE_EXTRA_CA_CERTS",
    "NPM_CONFIG_REGISTRY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
  ];
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = Deno.env.get(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
}
