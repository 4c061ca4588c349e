// The real entry point as a child process: with exactly the permissions of `deno task start`,
// it answers, shuts down on SIGTERM, and refuses bad configuration with one clear line.
import assert from "node:assert/strict";
import {
  copyProject,
  editPlaceholders,
  mainCommand,
  originsEnv,
  ROOT,
  startTaskFlags,
  startup,
} from "../support/main_process.ts";
import { freePorts } from "../../../testkit/ports.ts";
import { storeFile } from "../support/server_runtime.ts";

Deno.test("`deno task start` flags: serves /health from a KV file under ./data, stops on SIGTERM", async () => {
  const flags = await startTaskFlags();
  const env = originsEnv();
  const dataFile = storeFile(`./data/process-test-${crypto.randomUUID()}`);
  const child = mainCommand(flags, { ...env, VESTIBULE_DATA: dataFile, VESTIBULE_MAIL: "log" })
    .spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  try {
    // Wait for the "listening" line instead of guessing a delay.
    while (!output.includes('"message":"listening"')) {
      const { value, done } = await stdout.read();
      if (done) break;
      output += value;
    }
    assert.ok(output.includes('"message":"listening"'), output);
    const response = await fetch(`${env.VESTIBULE_BASE_URL}/health`);
    assert.equal(await response.text(), '{"ok":true,"service":"www"}');
    const requestId = response.headers.get("X-Request-Id");
    assert.match(requestId ?? "", /^[0-9a-f-]{36}$/);
    const page = await fetch(`${env.VESTIBULE_BASE_URL}/developers`);
    assert.equal(page.status, 200);
    await page.body?.cancel();
    child.kill("SIGTERM");
    for (;;) {
      const { value, done } = await stdout.read();
      if (done) break;
      output += value;
    }
    const status = await child.status;
    assert.equal(status.code, 0, output);
    assert.ok(output.includes('"message":"stopped"'), output);
    // Every line, request or not, is one JSON object with its time and level.
    for (const text of output.trimEnd().split("\n")) {
      const { time, level } = JSON.parse(text);
      assert.equal(new Date(time).toISOString(), time, text);
      assert.ok(["info", "warn", "error"].includes(level), text);
    }
    const logged = output.split("\n").filter((l) => l.includes(`"id":"${requestId}"`));
    assert.equal(logged.length, 1, output);
    const line = JSON.parse(logged[0]!);
    assert.equal(new Date(line.time).toISOString(), line.time);
    assert.deepEqual(
      { ...line, time: undefined, ms: undefined },
      {
        time: undefined,
        level: "info",
        id: requestId,
        method: "GET",
        host: new URL(env.VESTIBULE_BASE_URL!).host,
        path: "/health",
        route: "/health",
        status: 200,
        ms: undefined,
        client: "127.0.0.1",
      },
    );
  } finally {
    await child.stderr.cancel();
    for (const suffix of ["", "-shm", "-wal"]) {
      await Deno.remove(new URL(dataFile + suffix, ROOT)).catch(() => {});
    }
  }
});

Deno.test("a bad setting stops start-up with one line naming it", async (t) => {
  const flags = await startTaskFlags();
  const cases: { name: string; env: Record<string, string>; args?: string[]; names: string }[] = [
    {
      name: "non-http origin",
      env: { VESTIBULE_BASE_URL: "ftp://x" },
      names: "VESTIBULE_BASE_URL",
    },
    {
      name: "https required off loopback",
      env: { VESTIBULE_API_URL: "http://api.example.com" },
      names: "VESTIBULE_API_URL",
    },
    { name: "bad listen", env: { VESTIBULE_LISTEN: "nope" }, names: "VESTIBULE_LISTEN" },
    { name: "bad switch", env: { VESTIBULE_RATE_LIMITS: "maybe" }, names: "VESTIBULE_RATE_LIMITS" },
    { name: "unknown flag", env: {}, args: ["--colour=blue"], names: "--colour" },
    {
      name: "identical origins",
      env: {
        VESTIBULE_BASE_URL: "http://127.0.0.1:8000",
        VESTIBULE_AUTH_URL: "http://127.0.0.1:8000",
        VESTIBULE_API_URL: "http://127.0.0.1:8000",
      },
      names: 'VESTIBULE_BASE_URL="http://127.0.0.1:8000" and VESTIBULE_AUTH_URL',
    },
    {
      name: "log mail on a public origin",
      env: {
        VESTIBULE_BASE_URL: "https://www.example.com",
        VESTIBULE_AUTH_URL: "https://auth.example.com",
        VESTIBULE_API_URL: "https://api.example.com",
        VESTIBULE_LISTEN: "127.0.0.1:1",
      },
      names: "VESTIBULE_MAIL_LOG_PUBLIC",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const output = await mainCommand(flags, { ...originsEnv(), ...c.env }, { args: c.args })
        .output();
      assert.equal(output.code, 2);
      const stderr = new TextDecoder().decode(output.stderr);
      const lines = stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, stderr);
      assert.match(lines[0]!, /^vestibule: configuration error: /);
      assert.ok(lines[0]!.includes(c.names), lines[0]);
      assert.equal(new TextDecoder().decode(output.stdout), "");
    });
  }
});

Deno.test("a data or mail path outside what the start task may write is refused with one line", async (t) => {
  const flags = await startTaskFlags();
  const cases = [
    {
      env: { VESTIBULE_DATA: "/tmp/elsewhere.kv" },
      line: 'VESTIBULE_DATA="/tmp/elsewhere.kv": this process may not read and write ' +
        "/tmp/elsewhere.kv",
    },
    {
      env: { VESTIBULE_MAIL: "file:/tmp/outbox.jsonl" },
      line: 'VESTIBULE_MAIL="file:/tmp/outbox.jsonl": this process may not read and write ' +
        "/tmp/outbox.jsonl",
    },
  ];
  for (const c of cases) {
    await t.step(Object.keys(c.env)[0]!, async () => {
      const outcome = await startup(mainCommand(flags, { ...originsEnv(), ...c.env }));
      assert.ok(!outcome.listened, "refused before listening");
      assert.equal(outcome.code, 2);
      assert.equal(outcome.stdout, "");
      assert.equal(
        outcome.stderr,
        `vestibule: configuration error: ${c.line}; it must lie in a directory given to ` +
          "--allow-read and --allow-write (./data for deno task start)\n",
      );
    });
  }
});

Deno.test("a bad template stops start-up with one line naming the file and the JSON path", async () => {
  const flags = await startTaskFlags();
  // A copy of the project, so the shared static/ stays untouched.
  const dir = await copyProject();
  try {
    const page = JSON.parse(await Deno.readTextFile(`${dir}/static/pages/index.json`));
    page.content[0].level = 4;
    await Deno.writeTextFile(`${dir}/static/pages/index.json`, JSON.stringify(page));
    const output = await mainCommand(flags, { ...originsEnv(), VESTIBULE_DATA: ":memory:" }, {
      cwd: dir,
    }).output();
    assert.equal(output.code, 2);
    assert.equal(
      new TextDecoder().decode(output.stderr),
      "vestibule: template error: static/pages/index.json: $.content[0].level: must be 2 or 3\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a malformed upstreams file stops start-up with one line naming the file and the place", async () => {
  const flags = await startTaskFlags();
  // Under ./data: the one directory besides static/ the start task may read.
  const file = `data/upstreams-test-${crypto.randomUUID()}.json`;
  await Deno.mkdir(new URL("data", ROOT), { recursive: true });
  await Deno.writeTextFile(new URL(file, ROOT), '{"upstreams": [{"name": "a b",}]}');
  try {
    const outcome = await startup(mainCommand(flags, {
      ...originsEnv(),
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_UPSTREAMS: file,
    }));
    assert.ok(!outcome.listened, outcome.stdout);
    assert.equal(outcome.code, 2);
    assert.equal(
      outcome.stderr,
      `vestibule: VESTIBULE_UPSTREAMS (${file}): not valid JSON at line 1, column 31\n`,
    );
  } finally {
    await Deno.remove(new URL(file, ROOT));
  }
});

Deno.test("an address that cannot be bound stops start-up with one line naming it and its setting", async (t) => {
  const flags = await startTaskFlags();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  try {
    const cases = [
      {
        name: "port in use, VESTIBULE_LISTEN",
        env: { ...originsEnv(), VESTIBULE_LISTEN: `127.0.0.1:${port}` },
        line: new RegExp(
          `^vestibule: cannot listen on 127\\.0\\.0\\.1:${port} \\(VESTIBULE_LISTEN\\): .+$`,
        ),
      },
      {
        name: "port in use, from an origin",
        env: { ...originsEnv(), VESTIBULE_AUTH_URL: `http://127.0.0.1:${port}` },
        line: new RegExp(
          `^vestibule: cannot listen on 127\\.0\\.0\\.1:${port} \\(VESTIBULE_AUTH_URL\\): .+$`,
        ),
      },
      {
        name: "host that does not resolve",
        env: { ...originsEnv(), VESTIBULE_LISTEN: "nosuchhost.invalid:1" },
        line: /^vestibule: cannot listen on nosuchhost\.invalid:1 \(VESTIBULE_LISTEN\): .+$/,
      },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const outcome = await startup(mainCommand(flags, { ...c.env, VESTIBULE_DATA: ":memory:" }));
        assert.ok(!outcome.listened, outcome.stdout);
        assert.equal(outcome.code, 2);
        const lines = outcome.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 1, outcome.stderr);
        assert.match(lines[0]!, c.line);
      });
    }
  } finally {
    taken.close();
  }
});

Deno.test("an unknown VESTIBULE_* variable or flag stops start-up with one line naming the nearest known one", async (t) => {
  const flags = await startTaskFlags();
  const cases = [
    {
      env: { VESTIBULE_ADMIN_LISTN: "127.0.0.1:9100" },
      line: "unknown variable VESTIBULE_ADMIN_LISTN (expected: VESTIBULE_ADMIN_LISTEN)",
    },
    {
      env: { VESTIBULE_MAIL_FORM: "no-reply@example.com" },
      line: "unknown variable VESTIBULE_MAIL_FORM (expected: VESTIBULE_MAIL_FROM)",
    },
    {
      env: {},
      args: ["--trust-prxy=on"],
      line: "unknown flag --trust-prxy (expected: --trust-proxy)",
    },
    {
      // A name far from every setting is seen only where the environment can be listed.
      env: { VESTIBULE_SMTP_FROM: "no-reply@example.com" },
      allowEnv: "--allow-env",
      line: "unknown variable VESTIBULE_SMTP_FROM (expected: VESTIBULE_MAIL_FROM)",
    },
  ];
  for (const c of cases) {
    await t.step(c.line, async () => {
      const granted = c.allowEnv === undefined
        ? flags
        : flags.map((f) => f.startsWith("--allow-env") ? c.allowEnv : f);
      const outcome = await startup(
        mainCommand(granted, { ...originsEnv(), VESTIBULE_DATA: ":memory:", ...c.env }, {
          args: c.args,
        }),
      );
      assert.ok(!outcome.listened, "refused before listening");
      assert.equal(outcome.code, 2);
      assert.equal(outcome.stderr, `vestibule: configuration error: ${c.line}\n`);
      assert.equal(outcome.stdout, "");
    });
  }
});

Deno.test("start-up warns of plain HTTP on every interface and of each shipped placeholder page", async () => {
  const flags = await startTaskFlags();
  const [base, auth, api] = freePorts(3);
  const outcome = await startup(mainCommand(flags, {
    VESTIBULE_BASE_URL: `https://www.example.test:${base}`,
    VESTIBULE_AUTH_URL: `https://auth.example.test:${auth}`,
    VESTIBULE_API_URL: `https://api.example.test:${api}`,
    VESTIBULE_MAIL_LOG_PUBLIC: "on",
    VESTIBULE_DATA: ":memory:",
  }));
  assert.ok(outcome.listened, outcome.stderr);
  // The configuration's warnings; the one about approvals that would wait is waiting_test.ts's.
  const warnings = outcome.stdout.split("\n").filter((l) => l.includes('"level":"warn"'))
    .map((l) => JSON.parse(l).message).filter((m) => !m.startsWith("no event receiver"));
  assert.deepEqual(warnings.sort(), [
    "serving plain HTTP on every interface " +
    `(0.0.0.0:${base}, 0.0.0.0:${auth}, 0.0.0.0:${api}) for https origins: put a TLS proxy in ` +
    "front and set VESTIBULE_LISTEN, e.g. 127.0.0.1:8080",
    "static/legal/contact.html is Vestibule's shipped placeholder: write your own",
    "static/legal/privacy.html is Vestibule's shipped placeholder: write your own",
    "static/legal/terms.html is Vestibule's shipped placeholder: write your own",
    "static/pages/index.json is Vestibule's shipped placeholder: write your own",
  ]);
});

Deno.test("start-up has no placeholder to warn of once the operator has edited each page", async () => {
  const dir = await copyProject();
  try {
    await editPlaceholders(`${dir}/static`);
    const env = { ...originsEnv(), VESTIBULE_DATA: ":memory:" };
    const outcome = await startup(mainCommand(await startTaskFlags(), env, { cwd: dir }));
    assert.ok(outcome.listened, outcome.stderr);
    // The only warning left is the one about approved actions waiting for an event receiver.
    const warnings = outcome.stdout.split("\n").filter((line) => line.includes('"level":"warn"'));
    assert.deepEqual(warnings.filter((line) => !line.includes("no event receiver")), []);
    assert.equal(warnings.length, 1, outcome.stdout);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`--demo` says in plain lines on stderr who to sign in as, where, and where the link appears", async () => {
  const origins = originsEnv();
  const env = { ...origins, VESTIBULE_DATA: ":memory:" };
  const outcome = await startup(mainCommand(await startTaskFlags(), env, { args: ["--demo"] }));
  assert.ok(outcome.listened, outcome.stderr);
  assert.equal(
    outcome.stderr,
    'Demo: "Demo Outfitters" is owned by demo-owner@example.com (demo-member@example.com is a ' +
      "member).\n" +
      `Sign in as demo-owner@example.com at ${origins.VESTIBULE_AUTH_URL}/sign-in\n` +
      "The sign-in link appears here, on stderr (VESTIBULE_MAIL=log).\n",
  );
  // stdout stays the machine-readable log: one JSON object a line.
  for (const line of outcome.stdout.trimEnd().split("\n")) JSON.parse(line);
});
