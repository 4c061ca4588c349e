// Issue 8: connections that stall, and more of them than the process has descriptors for.
import assert from "node:assert/strict";
import { createTestApp, startTestServer } from "../support/harness.ts";
import { connectionServer, serve } from "../../../src/server.ts";
import { originsEnv, ROOT, startTaskFlags } from "../support/main_process.ts";

const encoder = new TextEncoder();
const HEALTH = '{"ok":true,"service":"www"}';

/** Connections that sent part of a request and then nothing. */
async function stall(origin: string, count: number, partial: string): Promise<Deno.Conn[]> {
  const port = Number(new URL(origin).port);
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(encoder.encode(partial));
    conns.push(conn);
  }
  return conns;
}

/** Whether the server closes the connection rather than answer (5 s at most, then a failure). */
async function closedByServer(conn: Deno.Conn): Promise<boolean> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, 5000);
  try {
    const n = await conn.read(new Uint8Array(4096));
    return n === null;
  } catch {
    if (timedOut) throw new Error("still open after 5 s");
    return true; // reset
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // closed by the timer
    }
  }
}

Deno.test("out of descriptors (ulimit -n 256), 300 stalled requests neither end the process nor keep /health from answering", async () => {
  const flags = await startTaskFlags();
  // A read deadline far away: room is made by closing stalled connections, not by waiting.
  const origins = originsEnv();
  const base = origins.VESTIBULE_BASE_URL!;
  const env: Record<string, string> = {
    ...origins,
    VESTIBULE_DATA: ":memory:",
    VESTIBULE_READ_TIMEOUT: "600",
  };
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", 'ulimit -n 256 && exec "$@"', "sh", Deno.execPath(), "run", ...flags, "main.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let output = "";
  const readUntil = async (text: string) => {
    while (!output.includes(text)) {
      const { value, done } = await stdout.read();
      if (done) break;
      output += value;
    }
  };
  try {
    await readUntil('"message":"listening"');
    assert.ok(output.includes('"message":"listening"'), output);
    const stalled = await stall(base, 300, "GET /health HT");
    const during = await fetch(`${base}/health`, {
      signal: AbortSignal.timeout(20_000), // fail rather than hang
    });
    assert.equal(await during.text(), HEALTH);
    for (const conn of stalled) conn.close();
    const after = await fetch(`${base}/health`);
    assert.equal(await after.text(), HEALTH);
  } finally {
    child.kill("SIGTERM");
    await readUntil("never printed: read to the end");
  }
  const status = await child.status;
  assert.equal(status.code, 0, output + "\nSTDERR:" + await stderr);
  // The descriptor limit was reached indeed, and reported once per run of failures.
  assert.match(
    output,
    /"level":"error","message":"accept failed","error":"Error: Too many open files/,
  );
  assert.ok(output.includes('"message":"stopped"'), output);
  assert.equal(await stderr, "");
});

Deno.test("VESTIBULE_MAX_CONNECTIONS is what a flood meets: the oldest waiting connections make room", async () => {
  const server = await startTestServer({ VESTIBULE_MAX_CONNECTIONS: "50" });
  try {
    const host = new URL(server.baseUrl).host;
    const stalled = await stall(server.baseUrl, 80, `GET /health HTTP/1.1\r\nHost: ${host}\r\n`);
    // The 51st to 80th closed the 1st to 30th; this request closes the 31st.
    const response = await fetch(`${server.baseUrl}/health`);
    assert.equal(await response.text(), HEALTH);
    const answered: number[] = [];
    for (const [i, conn] of stalled.entries()) {
      await conn.write(encoder.encode("Connection: close\r\n\r\n")).catch(() => 0);
      const text = await new Response(conn.readable).text().catch(() => "");
      if (text.endsWith(HEALTH)) answered.push(i + 1);
    }
    assert.deepEqual(answered, Array.from({ length: 49 }, (_, i) => i + 32));
  } finally {
    await server.close();
  }
});

Deno.test("VESTIBULE_READ_TIMEOUT and VESTIBULE_IDLE_TIMEOUT close stalled and idle connections", async (t) => {
  const server = await startTestServer({
    VESTIBULE_READ_TIMEOUT: "0.3",
    VESTIBULE_IDLE_TIMEOUT: "0.3",
  });
  const host = new URL(server.baseUrl).host;
  try {
    await t.step("half a request line", async () => {
      const [conn] = await stall(server.baseUrl, 1, "GET /hea");
      assert.equal(await closedByServer(conn!), true);
    });
    await t.step("headers without their end", async () => {
      const [conn] = await stall(server.baseUrl, 1, `GET /health HTTP/1.1\r\nHost: ${host}\r\n`);
      assert.equal(await closedByServer(conn!), true);
    });
    await t.step(
      "a body that stops half-way: closed, 400 (incomplete) in the request log",
      async () => {
        const [conn] = await stall(
          server.authUrl,
          1,
          `POST /mcp HTTP/1.1\r\nHost: ${new URL(server.authUrl).host}\r\n` +
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
            'Content-Length: 100\r\n\r\n{"jsonrpc":',
        );
        assert.equal(await closedByServer(conn!), true);
        assert.match(
          server.logs.at(-1)!,
          /"method":"POST",.*"path":"\/mcp","route":"\/mcp","status":400/,
        );
      },
    );
    await t.step("a keep-alive connection after its answer", async () => {
      const [conn] = await stall(
        server.baseUrl,
        1,
        `GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      );
      const buffer = new Uint8Array(4096);
      const n = await conn!.read(buffer);
      assert.ok(new TextDecoder().decode(buffer.subarray(0, n!)).endsWith(HEALTH));
      assert.equal(await closedByServer(conn!), true);
    });
  } finally {
    await server.close();
  }
});

Deno.test("a Deno without the per-connection server gets a warning and plain Deno.serve", async () => {
  const app = await createTestApp();
  const logs: string[] = [];
  const server = serve(app.config, app.handler, (line) => logs.push(line), {
    serveOnConnection: null,
  });
  try {
    assert.match(logs[0]!, /"level":"warn","message":"this Deno has no per-connection server/);
    const response = await fetch(`${app.config.baseUrl}/health`);
    assert.equal(await response.text(), HEALTH);
  } finally {
    await server.shutdown();
    app.store.close();
  }
});

Deno.test("this Deno has the per-connection server the connection limits are built on", () => {
  assert.equal(typeof connectionServer(), "function");
});
