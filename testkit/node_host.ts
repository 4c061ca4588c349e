// The black-box harness's server on Node.js (tests/blackbox/support/node_host.ts starts it): builds
// the service from src/app.ts as the in-process harness does, serves it through the Node.js runtime
// seam, and stops on SIGTERM. Runs on Node.js only (node testkit/node_host.ts SPEC_JSON).
//
// The test sets a fault for the store (testkit/store_faults.ts) with a line of JSON on standard
// input, and is told it is in force with `{"storeFault":"taken"}` on standard output.
//
// Log lines are appended to a file with a blocking write before the request that caused them is
// answered, so the test reads every line of a request once its response has arrived. The clock,
// when the test drives one, is asked of the test's process over loopback: a worker thread does the
// asking while this thread waits on it, because the service reads its clock synchronously.
import { openSync, writeSync } from "node:fs";
import process from "node:process";
import { createInterface } from "node:readline";
import { Worker } from "node:worker_threads";
import { createService } from "../src/app.ts";
import { resolveConfig } from "../src/config/config.ts";
import { serve, serveAdmin } from "../src/server.ts";
import { openPgStore } from "../src/store/pg_store.ts";
import { openSqliteStore } from "../src/store/sqlite_store.ts";
import { type StoreFault, withFaults } from "./store_faults.ts";

interface HostSpec {
  readonly env: Record<string, string>;
  /** Where log and mail-log lines go, one JSON string a line. */
  readonly logFile: string;
  /** The test's clock server (one line asked, one number answered), or null for Date.now. */
  readonly clockPort: number | null;
  readonly mailCa: readonly string[] | null;
  readonly storeFault: StoreFault | null;
}

const spec = JSON.parse(process.argv[2]!) as HostSpec;
const logFd = openSync(spec.logFile, "a");
const log = (line: string) => void writeSync(logFd, `${JSON.stringify(line)}\n`);
const say = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** A clock read synchronously from the test's clock server. */
function remoteClock(port: number): () => number {
  const shared = new SharedArrayBuffer(16);
  const flag = new Int32Array(shared, 0, 1);
  const value = new Float64Array(shared, 8, 1);
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
    const { connect } = require("node:net");
    const flag = new Int32Array(workerData.shared, 0, 1);
    const value = new Float64Array(workerData.shared, 8, 1);
    const socket = connect({ host: "127.0.0.1", port: workerData.port, noDelay: true });
    let buffered = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      buffered += chunk;
      let end;
      while ((end = buffered.indexOf("\\n")) >= 0) {
        value[0] = Number(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
      }
    });
    parentPort.on("message", () => socket.write("now\\n"));`,
    { eval: true, workerData: { shared, port } },
  );
  worker.unref();
  return () => {
    Atomics.store(flag, 0, 0);
    worker.postMessage(0);
    // Bounded: a test process that went away must not hang this one for ever.
    if (Atomics.wait(flag, 0, 0, 30_000) === "timed-out") {
      throw new Error("the test's clock is gone");
    }
    return value[0]!;
  };
}

try {
  const now = spec.clockPort === null ? Date.now : remoteClock(spec.clockPort);
  const config = resolveConfig(spec.env);
  // Opened here, as the in-process harness opens its store: its expiry reads the test's clock.
  const pg = config.postgres;
  const opened = pg === null
    ? await openSqliteStore(config.dataPath, now)
    : await openPgStore({ url: pg.url, poolSize: pg.poolSize, deadlineMs: pg.deadlineMs, now });
  let fault = spec.storeFault;
  const store = withFaults(opened, () => fault);
  createInterface({ input: process.stdin }).on("line", (line) => {
    fault = JSON.parse(line) as StoreFault | null;
    say({ storeFault: "taken" });
  });
  const service = await createService(config, {
    log,
    mailLog: log,
    now,
    store,
    ...(spec.mailCa === null ? {} : { mailCa: spec.mailCa }),
  });
  const server = serve(config, service.handler, log);
  const admin = service.admin === null ? null : serveAdmin(config, service.admin, log);
  await Promise.all([server.bound, admin?.bound]);
  await service.sender.start();
  const adminAddress = admin?.addresses[0];
  process.once("SIGTERM", async () => {
    await Promise.all([server.shutdown(), admin?.shutdown()]);
    await service.close();
    process.exit(0);
  });
  say({
    ready: true,
    adminUrl: adminAddress ? `http://${adminAddress.hostname}:${adminAddress.port}` : null,
  });
} catch (error) {
  const { name, message } = error as Error;
  say({ failed: { name, message } });
  process.exit(1);
}
