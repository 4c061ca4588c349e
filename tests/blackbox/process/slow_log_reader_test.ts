// A log reader that falls behind (a busy log shipper, a paused journald): main.ts, as `deno task
// start` runs it, logs to a pipe nobody reads for a while. The pipe fills within a few hundred
// requests; the server then waits for its reader, as a process writing to a full pipe does, and
// every request is still answered 200 with its log line whole. On Node.js a full pipe on fd 1
// refuses writes rather than waiting: found by the frozen-database load test, where Node.js
// answered some requests 500, /health among them, and tore their log lines.
import assert from "node:assert/strict";
import { mainCommand, originsEnv, ROOT, startTaskFlags } from "../support/main_process.ts";
import { storeFile } from "../support/server_runtime.ts";

/** Well past a 64 KiB pipe's worth of request log lines (about 250 bytes each). */
const REQUESTS = 1_500;
const CONNECTIONS = 16;
/** How long nobody reads the server's log once the load starts. */
const UNREAD_MS = 1_500;

Deno.test("a log reader that falls behind holds requests back, never fails them or tears a line", async () => {
  const dataFile = storeFile(`./data/slow-log-test-${crypto.randomUUID()}`);
  const origins = originsEnv();
  const env = {
    ...origins,
    VESTIBULE_DATA: dataFile,
    VESTIBULE_MAIL: "log",
    VESTIBULE_RATE_LIMITS: "off",
  };
  const child = mainCommand(await startTaskFlags(), env).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  while (!output.includes('"message":"listening"')) {
    const { value, done } = await reader.read();
    if (done) assert.fail(`exited before listening:\n${output}${await stderr}`);
    output += value;
  }
  const statuses: Record<string, number> = {};
  let sent = 0;
  const load = Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (sent < REQUESTS) {
      sent++;
      const response = await fetch(`${origins.VESTIBULE_BASE_URL}/health`);
      await response.body?.cancel();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }));
  await new Promise((resolve) => setTimeout(resolve, UNREAD_MS));
  const answeredUnread = Object.values(statuses).reduce((a, b) => a + b, 0);
  const reading = (async () => {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      output += next.value;
    }
  })();
  await load;
  child.kill("SIGTERM");
  const { code } = await child.status;
  await reading;
  for (const suffix of ["", "-shm", "-wal"]) {
    await Deno.remove(new URL(dataFile + suffix, ROOT)).catch(() => {});
  }
  assert.equal(code, 0, await stderr);

  // The pipe did fill: the load waited for the reader rather than finishing unread.
  assert.ok(answeredUnread < REQUESTS, `${answeredUnread} answered while the log was unread`);
  assert.deepEqual(statuses, { 200: REQUESTS });
  const lines = output.trimEnd().split("\n");
  const torn = lines.filter((line) => {
    try {
      JSON.parse(line);
      return false;
    } catch {
      return true;
    }
  });
  assert.deepEqual(torn.slice(0, 3), [], `${torn.length} log lines are not whole`);
  const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.path === "/health");
  assert.equal(logged.length, REQUESTS);
  assert.ok(logged.every((entry) => entry.status === 200));
});
