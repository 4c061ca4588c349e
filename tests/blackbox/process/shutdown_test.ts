// SIGTERM as a supervisor sends it: main.ts stops accepting, lets a request in flight finish
// within VESTIBULE_SHUTDOWN_GRACE, closes what is left after it, and exits 0.
import assert from "node:assert/strict";
import { INITIALIZE } from "../support/mcp_helpers.ts";
import { mainCommand, originsEnv, ROOT, startTaskFlags } from "../support/main_process.ts";
import { storeFile } from "../support/server_runtime.ts";

const encoder = new TextEncoder();

/** main.ts with the start task's flags; `until` reads its log up to a line. */
async function startMain(settings: Record<string, string>) {
  const env = originsEnv();
  const dataFile = storeFile(`./data/shutdown-test-${crypto.randomUUID()}`);
  const child = mainCommand(await startTaskFlags(), {
    ...env,
    ...settings,
    VESTIBULE_DATA: dataFile,
    VESTIBULE_MAIL: "log",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let output = "";
  const until = async (text: string) => {
    while (!output.includes(text)) {
      const { value, done } = await stdout.read();
      if (done) break;
      output += value;
    }
    return output.includes(text);
  };
  assert.ok(await until('"message":"listening"'), output);
  const auth = new URL(env.VESTIBULE_AUTH_URL!);
  return {
    child,
    auth,
    until,
    output: () => output,
    async finish() {
      await until("never printed: read to the end");
      const status = await child.status;
      for (const suffix of ["", "-shm", "-wal"]) {
        await Deno.remove(new URL(dataFile + suffix, ROOT)).catch(() => {});
      }
      return { code: status.code, stdout: output, stderr: await stderr };
    },
  };
}

/** An MCP initialize whose body is sent in two parts, the second when the test says. */
async function trickledInitialize(auth: URL) {
  const body = encoder.encode(JSON.stringify(INITIALIZE));
  const conn = await Deno.connect({ hostname: auth.hostname, port: Number(auth.port) });
  await conn.write(encoder.encode(
    `POST /mcp HTTP/1.1\r\nHost: ${auth.host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n`,
  ));
  await conn.write(body.subarray(0, 10));
  // Connections on one listener are accepted in order: once a later one is answered, this one
  // has been taken in and its request head (already sent) read, so the request is in flight.
  await (await fetch(`${auth.origin}/health`)).body?.cancel();
  return {
    /** Sends the rest and reads the answer until the server closes the connection. */
    async complete(): Promise<string> {
      await conn.write(body.subarray(10));
      return await new Response(conn.readable).text();
    },
    /** What arrives before the server closes the connection, without sending the rest. */
    async abandoned(): Promise<string> {
      return await new Response(conn.readable).text();
    },
  };
}

Deno.test("SIGTERM during a request whose body is still arriving: it completes, then exit 0", async () => {
  const server = await startMain({});
  const request = await trickledInitialize(server.auth);
  server.child.kill("SIGTERM");
  assert.ok(await server.until('"message":"stopping"'), server.output());
  // New connections are refused once stopping.
  await assert.rejects(() => fetch(`${server.auth.origin}/health`));
  const answer = await request.complete();
  assert.match(answer, /^HTTP\/1\.1 200 /);
  assert.match(answer, /"protocolVersion":"2025-11-25"/);
  assert.match(answer, /\r\nconnection: close\r\n/i, "the last answer on its connection");
  const { code, stdout, stderr } = await server.finish();
  assert.equal(code, 0, stdout + stderr);
  assert.match(
    stdout,
    /"method":"POST","host":"[^"]+","path":"\/mcp","route":"\/mcp","status":200/,
  );
  assert.ok(stdout.includes('"message":"stopped"'), stdout);
});

Deno.test("VESTIBULE_SHUTDOWN_GRACE: a request still unfinished after it is closed, and the process exits 0", async () => {
  // Read deadlines far away, so only the grace period can end the stalled request.
  const server = await startMain({
    VESTIBULE_SHUTDOWN_GRACE: "0.2",
    VESTIBULE_READ_TIMEOUT: "3600",
  });
  const request = await trickledInitialize(server.auth);
  // Without the grace period this would wait for an hour: fail (exit 137) instead of hanging.
  const failsafe = setTimeout(() => server.child.kill("SIGKILL"), 60_000);
  server.child.kill("SIGTERM");
  assert.ok(await server.until('"message":"stopping","graceSeconds":0.2'), server.output());
  // Closed without an answer: the rest of the body never came.
  assert.doesNotMatch(await request.abandoned(), /HTTP\/1\.1 200/);
  const { code, stdout, stderr } = await server.finish();
  clearTimeout(failsafe);
  assert.equal(code, 0, stdout + stderr);
  assert.ok(stdout.includes('"message":"stopped"'), stdout);
});

Deno.test("SIGTERM: every request's log line and the last lines are written before exit 0", async () => {
  // The log is written in batches (src/buffered_log.ts): what waits must not die with the process.
  const server = await startMain({});
  const ids = await Promise.all(Array.from({ length: 50 }, async () => {
    const response = await fetch(`${server.auth.origin}/health`);
    await response.body?.cancel();
    return response.headers.get("X-Request-Id")!;
  }));
  server.child.kill("SIGTERM");
  const { code, stdout, stderr } = await server.finish();
  assert.equal(code, 0, stdout + stderr);
  for (const id of ids) assert.ok(stdout.includes(`"id":"${id}"`), `${id} missing:\n${stdout}`);
  assert.ok(stdout.trimEnd().endsWith('"message":"stopped"}'), stdout);
});
