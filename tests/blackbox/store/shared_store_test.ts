// Several real processes on one KV file, as `deno task start` and `deno task admin` run them in
// a fresh copy of the project: SQLite says "database is locked" when they write at once.
import assert from "node:assert/strict";
import {
  copyProject,
  mainCommand,
  originsEnv,
  type ServerProcess,
  startServerProcess,
  taskFlags,
} from "../support/main_process.ts";
import { denoOnly } from "../support/server_runtime.ts";

interface RunningServer extends ServerProcess {
  jwksKids(): Promise<string[]>;
}

/** Starts a server in `dir` and resolves once it listens. */
async function startServer(dir: string): Promise<RunningServer> {
  const env = originsEnv();
  const server = await startServerProcess(dir, env);
  return {
    ...server,
    async jwksKids() {
      const response = await fetch(`${env.VESTIBULE_AUTH_URL}/api/auth/jwks`);
      assert.equal(response.status, 200);
      const jwks: { keys: { kid: string }[] } = await response.json();
      return jwks.keys.map((key) => key.kid);
    },
  };
}

/**
 * A third process writing the file in a loop, like a busy server would, so that the writes
 * under test meet SQLite's lock most of the time rather than by chance.
 */
async function busyNeighbour(path: string): Promise<{ stop(): Promise<void> }> {
  // Owner-only, as Vestibule refuses a store others may read.
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
  await Deno.writeFile(path, new Uint8Array(), { mode: 0o600 });
  const writer = `
    const kv = await Deno.openKv(${JSON.stringify(path)});
    await kv.set(["neighbour", "ready"], true);
    console.log("writing");
    for (let i = 0; ; i++) {
      await kv.set(["neighbour", i % 64], "x".repeat(1024));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--unstable-kv", writer],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await stdout.read()).value ?? "", /writing/);
  return {
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await stdout.cancel();
    },
  };
}

/** The value of each settled promise; the first rejection is thrown. */
function fulfilled<T>(outcomes: PromiseSettledResult<T>[]): T[] {
  return outcomes.map((outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
}

/** Stops every server that started: each must exit 0. */
async function stopAll(outcomes: PromiseSettledResult<RunningServer>[]): Promise<void> {
  for (const outcome of outcomes) {
    if (outcome.status === "rejected") continue;
    const { code, stderr } = await outcome.value.stop();
    assert.equal(code, 0, stderr);
  }
}

Deno.test("two servers started together on one fresh KV file both serve, with one signing key", {
  ignore: denoOnly("a third process writes the Deno KV file through Deno KV"),
}, async () => {
  const dir = await copyProject();
  let started: PromiseSettledResult<RunningServer>[] = [];
  try {
    const neighbour = await busyNeighbour(`${dir}/data/vestibule.kv`);
    started = await Promise.allSettled([startServer(dir), startServer(dir)]);
    await neighbour.stop();
    const [first, second] = await Promise.all(fulfilled(started).map((s) => s.jwksKids()));
    assert.equal(first!.length, 1, `one key, not ${JSON.stringify(first)}`);
    assert.deepEqual(second, first);
  } finally {
    await stopAll(started);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("`deno task admin` works while the server starts and runs on the same KV file", {
  ignore: denoOnly("a third process writes the Deno KV file through Deno KV"),
}, async () => {
  const dir = await copyProject();
  const flags = await taskFlags("admin", "src/operator/cli/cli.ts");
  const admin = async (...args: string[]) => {
    const command = mainCommand(flags, {}, { cwd: dir, entry: "src/operator/cli/cli.ts", args });
    const output = await command.output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.equal(stderr, "");
    return JSON.parse(new TextDecoder().decode(output.stdout));
  };
  let started: PromiseSettledResult<RunningServer>[] = [];
  try {
    const neighbour = await busyNeighbour(`${dir}/data/vestibule.kv`);
    // All write first: the server its signing key, the commands a business and a key.
    const commands = Promise.allSettled([
      admin("create-business", "--owner", "boss@example.com", "--name", "Boss Co"),
      admin("rotate-signing-key"),
    ]);
    started = await Promise.allSettled([startServer(dir)]);
    fulfilled(await commands);
    await neighbour.stop();
    const [server] = fulfilled(started);
    const rotated = await admin("rotate-signing-key");
    const kids = await server!.jwksKids();
    assert.ok(kids.includes(rotated.kid), "the running server publishes the new key");
    assert.ok(kids.includes(rotated.retired), "and the one it retired");
    const listed = await admin("list-businesses", "--email", "boss@example.com");
    assert.equal(listed.businesses[0].business.name, "Boss Co");
  } finally {
    await stopAll(started);
    await Deno.remove(dir, { recursive: true });
  }
});
