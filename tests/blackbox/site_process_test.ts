// The real entry point as a child process: with exactly the permissions of `deno task start`,
// it answers, shuts down on SIGTERM, and refuses bad configuration with one clear line.
import assert from "node:assert/strict";
import { originsEnv, ROOT, startTaskFlags } from "./process_helpers.ts";

function spawn(flags: string[], env: Record<string, string>, args: string[] = []) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "main.ts", ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("`deno task start` flags: serves /health from a KV file under ./data, stops on SIGTERM", async () => {
  const flags = await startTaskFlags();
  const env = originsEnv();
  const dataFile = `./data/process-test-${crypto.randomUUID()}.kv`;
  const child = spawn(flags, { ...env, VESTIBULE_DATA: dataFile, VESTIBULE_MAIL: "log" }).spawn();
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
    assert.ok(output.includes('"path":"/health","status":200'), output);
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
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const output = await spawn(flags, { ...originsEnv(), ...c.env }, c.args).output();
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

Deno.test("a data path outside ./data is refused with one clear line", async () => {
  const flags = await startTaskFlags();
  const output = await spawn(flags, { ...originsEnv(), VESTIBULE_DATA: "/tmp/elsewhere.kv" })
    .output();
  assert.equal(output.code, 2);
  const stderr = new TextDecoder().decode(output.stderr).trimEnd();
  assert.equal(stderr.split("\n").length, 1, stderr);
  assert.match(stderr, /^vestibule: cannot open VESTIBULE_DATA="\/tmp\/elsewhere\.kv": /);
});

Deno.test("a bad template stops start-up with one line naming the file and the JSON path", async () => {
  const flags = await startTaskFlags();
  // A copy of the project, so the shared static/ stays untouched.
  const dir = await Deno.makeTempDir({ prefix: "vestibule-template-" });
  try {
    for (const name of ["main.ts", "deno.json", "deno.lock"]) {
      await Deno.copyFile(new URL(name, ROOT), `${dir}/${name}`);
    }
    for (const tree of ["src", "static"]) {
      await _copyTree(new URL(`${tree}/`, ROOT), `${dir}/${tree}`);
    }
    const page = JSON.parse(await Deno.readTextFile(`${dir}/static/pages/index.json`));
    page.content[0].level = 4;
    await Deno.writeTextFile(`${dir}/static/pages/index.json`, JSON.stringify(page));
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, "main.ts"],
      cwd: dir,
      env: { NO_COLOR: "1", ...originsEnv(), VESTIBULE_DATA: ":memory:" },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
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

async function _copyTree(from: URL, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await _copyTree(new URL(`${entry.name}/`, from), `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(new URL(entry.name, from), `${to}/${entry.name}`);
  }
}
