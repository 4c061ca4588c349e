import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { maskDataUrl } from "../../src/config/data_url.ts";
import { checkGrantedPaths } from "../../src/config/granted_paths.ts";
import { DEFAULT_RATE_LIMITS } from "../../src/config/rate_limit_table.ts";
import { OTEL_VARIABLES } from "../../src/config/otel.ts";
import { ConfigError, flagName, SETTINGS } from "../../src/config/settings.ts";
import { likelyTypos } from "../../src/config/typo_hints.ts";
import { checkServeConfig, configWarnings } from "../../src/config/warnings.ts";

const CONFIG_MODULE = new URL("../../src/config/config.ts", import.meta.url).href;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("defaults: three loopback origins, one listener each, KV under ./data", () => {
  const config = resolveConfig({});
  assert.equal(config.baseUrl, "http://localhost:8000");
  assert.equal(config.authUrl, "http://localhost:8001");
  assert.equal(config.apiUrl, "http://localhost:8002");
  assert.deepEqual(config.listen, [
    { hostname: "127.0.0.1", port: 8000 },
    { hostname: "127.0.0.1", port: 8001 },
    { hostname: "127.0.0.1", port: 8002 },
  ]);
  assert.equal(config.dataPath, "./data/vestibule.kv");
  assert.deepEqual(config.mail, { kind: "log" });
  assert.deepEqual(config.trustedOrigins, [config.baseUrl, config.authUrl, config.apiUrl]);
  assert.equal(config.trustProxy, false);
  assert.equal(config.rateLimits, DEFAULT_RATE_LIMITS);
  assert.equal(config.mcpResponse, "json");
  assert.equal(config.mcpPageSize, 20);
  assert.equal(config.maxConnections, 1000);
  assert.equal(config.readTimeoutMs, 10_000);
  assert.equal(config.idleTimeoutMs, 5_000);
  assert.equal(config.shutdownGraceMs, 10_000);
  assert.equal(config.adminTokenFile, null, "the operator API is off by default");
  assert.ok(Object.isFrozen(config));
});

Deno.test("connection cap and deadlines: a whole number, and seconds with decimals", () => {
  const config = resolveConfig(
    { VESTIBULE_MAX_CONNECTIONS: "50", VESTIBULE_READ_TIMEOUT: "0.25" },
    ["--idle-timeout=75"],
  );
  assert.equal(config.maxConnections, 50);
  assert.equal(config.readTimeoutMs, 250);
  assert.equal(config.idleTimeoutMs, 75_000);
});

Deno.test("origins are normalised and https hosts listen on every interface", () => {
  const config = resolveConfig({
    VESTIBULE_BASE_URL: "https://WWW.Example.com/",
    VESTIBULE_AUTH_URL: "https://auth.example.com:8443",
    VESTIBULE_API_URL: "http://[::1]:9002",
    VESTIBULE_TRUSTED_ORIGINS: "https://app.example.com, https://app.example.com",
  });
  assert.equal(config.baseUrl, "https://www.example.com");
  assert.equal(config.authUrl, "https://auth.example.com:8443");
  assert.deepEqual(config.listen, [
    { hostname: "0.0.0.0", port: 443 },
    { hostname: "0.0.0.0", port: 8443 },
    { hostname: "::1", port: 9002 },
  ]);
  assert.deepEqual(config.trustedOrigins.at(-1), "https://app.example.com");
  assert.equal(config.trustedOrigins.length, 4);
});

Deno.test("VESTIBULE_LISTEN lets origins share a listener; flags win over variables", () => {
  const config = resolveConfig(
    { VESTIBULE_LISTEN: "127.0.0.1:9000, [::1]:9001", VESTIBULE_MAIL: "log" },
    ["--mail=file:/tmp/outbox.jsonl", "--rate-limits=off", "--demo", "--mcp-page-size=5"],
  );
  assert.deepEqual(config.listen, [
    { hostname: "127.0.0.1", port: 9000 },
    { hostname: "::1", port: 9001 },
  ]);
  assert.deepEqual(config.mail, { kind: "file", path: "/tmp/outbox.jsonl" });
  assert.equal(config.rateLimits, null);
  assert.equal(config.demo, true);
  assert.equal(config.mcpPageSize, 5);
});

Deno.test("VESTIBULE_DATA=postgres://… selects PostgreSQL with its password file, pool size and deadline", () => {
  const kv = resolveConfig({});
  assert.equal(kv.postgres, null);
  const url = "postgresql://app:p%40ss@db.internal:6432/vestibule?sslmode=verify-full";
  const config = resolveConfig({
    VESTIBULE_DATA: url,
    VESTIBULE_DATA_PASSWORD_FILE: "data/pg-password",
    VESTIBULE_DATA_POOL_SIZE: "4",
    VESTIBULE_DATA_TIMEOUT: "2.5",
  });
  assert.deepEqual(config.postgres, {
    url,
    passwordFile: "data/pg-password",
    poolSize: 4,
    deadlineMs: 2500,
  });
  assert.equal(resolveConfig({ VESTIBULE_DATA: url }).postgres?.poolSize, 10);
  assert.equal(resolveConfig({ VESTIBULE_DATA: url }).postgres?.deadlineMs, 5000);
  assert.equal(
    maskDataUrl(url),
    "postgresql://app:***@db.internal:6432/vestibule?sslmode=verify-full",
  );
  assert.equal(maskDataUrl("./data/vestibule.kv"), "./data/vestibule.kv");
  // No file to grant: the database is reached over the network.
  checkGrantedPaths(config, ["dataPath"], () => assert.fail("nothing to check"));
});

Deno.test("VESTIBULE_DATA selects the store by its form: a URL, an SQLite file name, else Deno KV", () => {
  const store = (data?: string) =>
    resolveConfig(data === undefined ? {} : { VESTIBULE_DATA: data }).store;
  assert.equal(store(), "kv", "the default stays Deno KV");
  assert.equal(store(":memory:"), "kv");
  assert.equal(store("data/v.kv"), "kv");
  assert.equal(store("data/vestibule.sqlite"), "sqlite");
  assert.equal(store("data/vestibule.sqlite3"), "sqlite");
  assert.equal(store("/var/lib/vestibule/store.db"), "sqlite");
  assert.equal(store("data/db.kv"), "kv", "the ending decides, not a word in the path");
  assert.equal(store("postgres://app@db/vestibule.db"), "postgres");
  // An SQLite file is a file like KV's: this process must be granted it.
  const granted: string[] = [];
  checkGrantedPaths(resolveConfig({ VESTIBULE_DATA: "data/v.sqlite" }), ["dataPath"], (_, path) => {
    granted.push(path);
    return true;
  });
  assert.deepEqual(granted, ["data/v.sqlite", "data/v.sqlite"]);
});

Deno.test("flag names mirror the variables", () => {
  assert.equal(flagName("VESTIBULE_BASE_URL"), "--base-url");
  assert.equal(flagName("VESTIBULE_CIMD_ALLOW_LOOPBACK"), "--cimd-allow-loopback");
});

Deno.test("VESTIBULE_UPSTREAM_KEY_FILE names the upstream token keys' file; unset, there is none", () => {
  assert.equal(resolveConfig({}).upstreamKeyFile, null);
  assert.equal(resolveConfig({ VESTIBULE_UPSTREAM_KEY_FILE: "" }).upstreamKeyFile, null);
  const env = { VESTIBULE_UPSTREAM_KEY_FILE: "data/upstream.key" };
  assert.equal(resolveConfig(env).upstreamKeyFile, "data/upstream.key");
  assert.equal(
    resolveConfig(env, ["--upstream-key-file=data/other.key"]).upstreamKeyFile,
    "data/other.key",
    "the flag wins over the variable",
  );
  assert.throws(
    () => resolveConfig({ VESTIBULE_UPSTREAMS_KEY_FILE: "data/upstream.key" }),
    new ConfigError(
      "unknown variable VESTIBULE_UPSTREAMS_KEY_FILE (expected: VESTIBULE_UPSTREAM_KEY_FILE)",
    ),
  );
});

Deno.test("VESTIBULE_RATE_LIMITS overrides single limits and keeps the other defaults", () => {
  const { rateLimits } = resolveConfig({
    VESTIBULE_RATE_LIMITS: "token=60, mail=10/15, onboarding=1000:50",
  });
  assert.deepEqual(rateLimits?.token, { perMinute: 60, burst: 60 });
  assert.deepEqual(rateLimits?.mail, { perMinute: 10 / 15, burst: 10 });
  assert.deepEqual(rateLimits?.onboarding, { perMinute: 1000, burst: 50 });
  assert.deepEqual(rateLimits?.registration, DEFAULT_RATE_LIMITS.registration);
});

Deno.test("checkGrantedPaths asks for read and write on each path the process uses", () => {
  const config = resolveConfig({
    VESTIBULE_DATA: "data/v.kv",
    VESTIBULE_MAIL: "file:/srv/outbox.jsonl",
  });
  const asked: string[] = [];
  const underData = (name: "read" | "write", path: string) => {
    asked.push(`${name} ${path}`);
    return path.startsWith("data/");
  };
  checkGrantedPaths(config, ["dataPath"], underData);
  assert.deepEqual(asked, ["read data/v.kv", "write data/v.kv"], "the admin CLI sends no mail");
  assert.throws(
    () => checkGrantedPaths(config, ["dataPath", "mail"], underData),
    new ConfigError(
      'VESTIBULE_MAIL="file:/srv/outbox.jsonl": this process may not read and write ' +
        "/srv/outbox.jsonl; it must lie in a directory given to --allow-read and --allow-write " +
        "(./data for deno task start)",
    ),
  );
  const inMemory = resolveConfig({ VESTIBULE_DATA: ":memory:" });
  checkGrantedPaths(inMemory, ["dataPath", "mail"], () => assert.fail("nothing to check"));
});

Deno.test("the log mailer with a public origin is refused unless explicitly allowed", () => {
  const publicOrigins = {
    VESTIBULE_BASE_URL: "https://www.example.com",
    VESTIBULE_AUTH_URL: "https://auth.example.com",
    VESTIBULE_API_URL: "https://api.example.com",
  };
  assert.throws(
    () => checkServeConfig(resolveConfig(publicOrigins)),
    new ConfigError(
      'VESTIBULE_MAIL=log writes sign-in links to the log, but VESTIBULE_BASE_URL="https://www.example.com" ' +
        "is public: configure smtp:// or file:PATH, or set VESTIBULE_MAIL_LOG_PUBLIC=on",
    ),
  );
  checkServeConfig(resolveConfig({ ...publicOrigins, VESTIBULE_MAIL_LOG_PUBLIC: "on" }));
  checkServeConfig(resolveConfig({ ...publicOrigins, VESTIBULE_MAIL: "file:./data/out.jsonl" }));
  checkServeConfig(resolveConfig({}));
});

Deno.test("an unknown VESTIBULE_* variable stops start-up, naming the nearest known one", () => {
  const refused = (env: Record<string, string | undefined>, line: string) =>
    assert.throws(() => resolveConfig(env), new ConfigError(line));
  refused(
    { VESTIBULE_ADMIN_LISTN: "127.0.0.1:9100", OTHER: "x" },
    "unknown variable VESTIBULE_ADMIN_LISTN (expected: VESTIBULE_ADMIN_LISTEN)",
  );
  refused(
    { VESTIBULE_MAIL_FORM: "a@example.com", VESTIBULE_BASEURL: "" },
    "unknown variables VESTIBULE_MAIL_FORM (expected: VESTIBULE_MAIL_FROM), " +
      "VESTIBULE_BASEURL (expected: VESTIBULE_BASE_URL)",
  );
  // Guesses no edit distance finds: the setting that does what the name suggests.
  refused(
    { VESTIBULE_PORT: "8080", VESTIBULE_HOST: "0.0.0.0", VESTIBULE_DATA_DIR: "d" },
    "unknown variables VESTIBULE_PORT (expected: VESTIBULE_LISTEN), VESTIBULE_HOST (expected: " +
      "VESTIBULE_LISTEN), VESTIBULE_DATA_DIR (expected: VESTIBULE_DATA)",
  );
  assert.equal(
    resolveConfig({ VESTIBULE_PORT: undefined, OTHER: "x" }).demo,
    false,
    "unset: no typo",
  );
});

Deno.test("without a list of the environment, every name one slip from a setting is looked for", () => {
  const looked = new Set(likelyTypos());
  for (
    const name of [
      "VESTIBULE_ADMIN_LISTN", // a letter missing
      "VESTIBULE_MAIL_FORM", // two swapped
      "VESTIBULE_TRUST_PROXYY", // one added
      "VESTIBULE_TRUST_PROXI", // one changed
      "VESTIBULE_TRUSTPROXY", // no inner underscore
      "VESTIBULE_mail_from", // lower case
      "VESTIBULE_PORT", // a guess
    ]
  ) assert.ok(looked.has(name), name);
  assert.ok(!looked.has("VESTIBULE_MAIL_FROM"), "a setting is no typo");
});

Deno.test("under --allow-env=VESTIBULE_* the environment read holds the settings and the slips set, nothing more", async () => {
  // The 22,000 names looked for were once all kept (undefined), 4–10 MiB of the idle server.
  const program = `import { readEnvironment } from ${JSON.stringify(CONFIG_MODULE)};
    const env = readEnvironment();
    const set = Object.entries(env).filter(([, value]) => value !== undefined);
    console.log(JSON.stringify({ names: Object.keys(env), set }));`;
  // `deno eval` has every permission: the program runs from a file, as main.ts does.
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(file, program);
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", `--config=${DENO_JSON}`, "--no-lock", "--allow-env=VESTIBULE_*,OTEL_*", file],
    env: { VESTIBULE_MAIL_FORM: "no-reply@example.com", VESTIBULE_DEMO: "on" },
  }).output().finally(() => Deno.remove(file));
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const { names, set } = JSON.parse(new TextDecoder().decode(stdout));
  assert.deepEqual(set, [
    ["VESTIBULE_DEMO", "on"],
    ["VESTIBULE_MAIL_FORM", "no-reply@example.com"],
  ]);
  const settings = Object.values(SETTINGS).map((setting) => setting.env);
  assert.deepEqual(names.sort(), [...settings, ...OTEL_VARIABLES, "VESTIBULE_MAIL_FORM"].sort());
});

Deno.test("warnings: plain HTTP on every interface for https origins, not behind a loopback listener", () => {
  const env = {
    VESTIBULE_BASE_URL: "https://www.example.com",
    VESTIBULE_AUTH_URL: "https://auth.example.com",
    VESTIBULE_API_URL: "https://api.example.com",
  };
  assert.deepEqual(configWarnings(resolveConfig(env)), [
    "serving plain HTTP on every interface (0.0.0.0:443) for https origins: put a TLS proxy in " +
    "front and set VESTIBULE_LISTEN, e.g. 127.0.0.1:8080",
  ]);
  const proxied = { ...env, VESTIBULE_LISTEN: "127.0.0.1:8080" };
  assert.deepEqual(configWarnings(resolveConfig(proxied)), []);
  assert.deepEqual(configWarnings(resolveConfig({})), []);
});

Deno.test("events: VESTIBULE_WEBHOOK_URL needs its secret file, and the reverse", async (t) => {
  const secret = { VESTIBULE_WEBHOOK_SECRET_FILE: "data/webhook.secret" };
  await t.step("both: the endpoint and the file", () => {
    const env = { ...secret, VESTIBULE_WEBHOOK_URL: "https://hooks.example.com/in" };
    assert.deepEqual(resolveConfig(env).webhook, {
      url: "https://hooks.example.com/in",
      secretFile: "data/webhook.secret",
    });
    assert.equal(resolveConfig({}).webhook, null, "neither: no events");
  });
  const cases = [
    [
      { VESTIBULE_WEBHOOK_URL: "https://hooks.example.com/in" },
      "VESTIBULE_WEBHOOK_SECRET_FILE is required with VESTIBULE_WEBHOOK_URL: a file holding the signing secret (whsec_…)",
    ],
    [
      secret,
      "VESTIBULE_WEBHOOK_SECRET_FILE is set but VESTIBULE_WEBHOOK_URL is not: name the endpoint events go to",
    ],
    [
      { ...secret, VESTIBULE_WEBHOOK_URL: "hooks.example.com" },
      'VESTIBULE_WEBHOOK_URL="hooks.example.com": must be an absolute http(s) URL',
    ],
    [
      { ...secret, VESTIBULE_WEBHOOK_URL: "ftp://hooks.example.com/" },
      'VESTIBULE_WEBHOOK_URL="ftp://hooks.example.com/": must be an http(s) URL without a fragment',
    ],
  ] as const;
  for (const [env, message] of cases) {
    await t.step(message, () => {
      assert.throws(() => resolveConfig(env), new ConfigError(message));
    });
  }
  await t.step("plain HTTP off loopback is a warning", () => {
    const env = { ...secret, VESTIBULE_WEBHOOK_URL: "http://receiver.internal:9000/in" };
    assert.deepEqual(configWarnings(resolveConfig(env)), [
      "VESTIBULE_WEBHOOK_URL is plain HTTP to receiver.internal:9000: events are signed but " +
      "readable on the way; use https unless that network is private",
    ]);
    const local = { ...secret, VESTIBULE_WEBHOOK_URL: "http://127.0.0.1:9000/in" };
    assert.deepEqual(configWarnings(resolveConfig(local)), []);
  });
});

Deno.test("warnings: the operator listener on every interface, where anyone may scrape it", () => {
  for (const host of ["0.0.0.0", "[::]"]) {
    const env = { VESTIBULE_ADMIN_LISTEN: `${host}:9100` };
    assert.deepEqual(configWarnings(resolveConfig(env)), [
      `the operator listener VESTIBULE_ADMIN_LISTEN=${host}:9100 is on ` +
      "every interface, without authentication: bind it to loopback or a private address",
    ]);
  }
  const loopback = { VESTIBULE_ADMIN_LISTEN: "127.0.0.1:9100" };
  assert.deepEqual(configWarnings(resolveConfig(loopback)), []);
});

Deno.test("each listen address knows the setting that asked for it, for start-up messages", () => {
  const derived = resolveConfig({
    VESTIBULE_BASE_URL: "https://www.example.com",
    VESTIBULE_AUTH_URL: "https://auth.example.com",
    VESTIBULE_API_URL: "http://localhost:9002",
  });
  assert.deepEqual(derived.listen, [
    { hostname: "0.0.0.0", port: 443 },
    { hostname: "127.0.0.1", port: 9002 },
  ]);
  assert.deepEqual(derived.listenSettings, [
    "VESTIBULE_BASE_URL, VESTIBULE_AUTH_URL",
    "VESTIBULE_API_URL",
  ]);
  const explicit = resolveConfig({ VESTIBULE_LISTEN: "127.0.0.1:1,127.0.0.1:2" });
  assert.deepEqual(explicit.listenSettings, ["VESTIBULE_LISTEN", "VESTIBULE_LISTEN"]);
});
