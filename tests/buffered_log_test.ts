// The batched log: lines wait up to 50 ms (or until 64 KiB wait) and go out in one write, and
// none is lost when the process ends while they wait (Deno.exit, the unload event of
// main.ts's exit; an uncaught error or rejection).
import assert from "node:assert/strict";
import { createBufferedLog } from "../src/buffered_log.ts";

/** Records every write; `limit` bytes at most per write, as a pipe may take part of them. */
function recorder(limit = Infinity) {
  const writes: string[] = [];
  return {
    writes,
    text: () => writes.join(""),
    writeSync(bytes: Uint8Array) {
      const taken = bytes.subarray(0, Math.min(limit, bytes.length));
      writes.push(new TextDecoder().decode(taken));
      return taken.length;
    },
  };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
/** Set after the log's own timer, so it runs after that timer has fired. */
const past50ms = () => new Promise((resolve) => setTimeout(resolve, 60));

Deno.test("lines of several turns go out together, in order, in one write within 50 ms", async () => {
  const output = recorder();
  const { log } = createBufferedLog(output);
  log('{"n":1}');
  log('{"n":2}');
  await turn();
  log('{"n":3}');
  await turn();
  assert.deepEqual(output.writes, [], "nothing written before 50 ms have passed");
  await past50ms();
  assert.deepEqual(output.writes, ['{"n":1}\n{"n":2}\n{"n":3}\n']);
  log('{"n":4}');
  await past50ms();
  assert.deepEqual(output.writes.slice(1), ['{"n":4}\n'], "the next line waits no longer");
});

Deno.test("flush writes at once, and a partial write is completed by further writes", () => {
  const output = recorder(5);
  const buffered = createBufferedLog(output);
  buffered.log("first line");
  buffered.log("second");
  buffered.flush();
  assert.equal(output.text(), "first line\nsecond\n");
  assert.ok(output.writes.length > 1);
  buffered.flush();
  assert.equal(output.text(), "first line\nsecond\n", "an empty flush writes nothing");
});

Deno.test("64 KiB waiting are written at once, without waiting for the 50 ms", () => {
  const output = recorder();
  const { log, flush } = createBufferedLog(output);
  const line = "x".repeat(1023);
  for (let i = 0; i < 63; i++) log(line);
  assert.equal(output.writes.length, 0);
  log(line);
  assert.equal(output.writes.length, 1);
  assert.equal(output.writes[0]!.length, 64 * 1024);
  flush();
});

Deno.test("any text is written as UTF-8, in order, and a line too long to wait goes out whole", () => {
  const output = recorder();
  const { log, flush } = createBufferedLog(output);
  const long = "ü".repeat(50_000);
  log('{"path":"/caf\u00e9 \u{1F6AA}"}');
  log(long);
  log("after");
  flush();
  assert.equal(output.text(), `{"path":"/caf\u00e9 \u{1F6AA}"}\n${long}\nafter\n`);
});

// Each ending comes within the 50 ms, so the lines still wait when it comes: the crashes
// are timers set before the lines are logged, and thus run before the flush.
for (
  const [ending, code] of [
    ["Deno.exit(3) after the lines", 3],
    ["an uncaught error", 1],
    ["an unhandled rejection", 1],
  ] as const
) {
  Deno.test(`no line is lost when the process ends by ${ending}`, async () => {
    const module = new URL("../src/buffered_log.ts", import.meta.url).href;
    const program = `
      import { createBufferedLog, flushBeforeExit } from ${JSON.stringify(module)};
      const buffered = createBufferedLog(Deno.stdout);
      flushBeforeExit(buffered);
      ${ending === "an uncaught error" ? "setTimeout(() => { throw new Error('boom'); }, 0);" : ""}
      ${
      ending === "an unhandled rejection"
        ? "setTimeout(() => Promise.reject(new Error('boom')), 0);"
        : ""
    }
      for (let i = 0; i < 1000; i++) buffered.log(JSON.stringify({ line: i }));
      ${ending === "Deno.exit(3) after the lines" ? "Deno.exit(3);" : ""}
    `;
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-lock", program],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, code, new TextDecoder().decode(run.stderr));
    const lines = new TextDecoder().decode(run.stdout).trimEnd().split("\n");
    assert.deepEqual(lines, Array.from({ length: 1000 }, (_, i) => JSON.stringify({ line: i })));
  });
}

Deno.test("a reader that is gone (broken pipe) drops the lines, as console.log does; other errors throw", () => {
  const failing = (error: Error) =>
    createBufferedLog({
      writeSync() {
        throw error;
      },
    });
  const gone = failing(new Deno.errors.BrokenPipe("Broken pipe (os error 32)"));
  gone.log("line");
  gone.flush();
  gone.log("next");
  gone.flush();
  const full = failing(new Error("No space left on device (os error 28)"));
  full.log("line");
  assert.throws(() => full.flush(), /No space left/);
});
