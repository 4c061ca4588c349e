// The harness's server on Node.js (the suite's Node.js pass): testkit/node_host.ts as a child
// process, serving from an SQLite file that this process opens too, so a test seeds and reads the
// store it serves from as it does in-process (SQLite's WAL takes two processes).
import { openPgStore } from "../../../src/store/pg_store.ts";
import { openSqliteStore } from "../../../src/store/sqlite_store.ts";
import type { Store } from "../../../src/store/store.ts";
import type { StoreFault } from "../../../testkit/store_faults.ts";

const HOST = new URL("../../../testkit/node_host.ts", import.meta.url);

export interface NodeHost {
  /** Every log line the server wrote so far, including those of a request just answered. */
  readonly logs: string[];
  readonly store: Store;
  readonly adminUrl: string | null;
  /** Resolves once the server's store meets `fault` (null: none). */
  setStoreFault(fault: StoreFault | null): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the service `env` configures on `node`; the store is the PostgreSQL database or the
 * SQLite file `dataUrl` names, else a new SQLite file (VESTIBULE_DATA is the harness's). `now` other than Date.now is
 * served to the child over loopback.
 */
export async function startNodeHost(
  node: string,
  env: Record<string, string>,
  options: {
    readonly now?: () => number;
    readonly mailCa?: readonly string[];
    readonly dataUrl?: string;
    readonly storeFault?: StoreFault;
  },
): Promise<NodeHost> {
  const dir = await Deno.makeTempDir({ prefix: "vestibule-node-host-" });
  const dataPath = options.dataUrl ?? `${dir}/store.sqlite`;
  const logFile = `${dir}/log.jsonl`;
  await Deno.writeTextFile(logFile, "");
  const now = options.now ?? Date.now;
  const clock = now === Date.now ? null : _serveClock(now);
  const spec = {
    env: { ...env, VESTIBULE_DATA: dataPath },
    logFile,
    clockPort: clock?.port ?? null,
    mailCa: options.mailCa ?? null,
    storeFault: options.storeFault ?? null,
  };
  const child = new Deno.Command(node, {
    args: [HOST.pathname, JSON.stringify(spec)],
    cwd: new URL("../../../", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  // Store faults go to the child one line each (testkit/node_host.ts).
  const control = child.stdin.getWriter();
  const cleanUp = async () => {
    await control.close().catch(() => {});
    clock?.close();
    await Deno.remove(dir, { recursive: true });
  };
  let first: { ready?: true; adminUrl?: string | null; failed?: { name: string; message: string } };
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    text += value;
  }
  // Later lines are read as they come, so a full pipe never blocks it: each store fault it took
  // says so in one line, anything else is dropped.
  const faultsTaken: (() => void)[] = [];
  const drained = (async () => {
    let rest = text.slice(text.indexOf("\n") + 1);
    for (;;) {
      for (let end = rest.indexOf("\n"); end >= 0; end = rest.indexOf("\n")) {
        if (rest.slice(0, end) === '{"storeFault":"taken"}') faultsTaken.shift()?.();
        rest = rest.slice(end + 1);
      }
      const { value, done } = await lines.read();
      if (done) return;
      rest += value;
    }
  })();
  try {
    first = JSON.parse(text.split("\n")[0]!);
  } catch {
    await Promise.all([child.status, drained]);
    await cleanUp();
    throw new Error(`the Node.js server did not start:\n${text}${await stderr}`);
  }
  if (first.failed !== undefined) {
    await Promise.all([child.status, drained]);
    await cleanUp();
    throw Object.assign(new Error(first.failed.message), { name: first.failed.name });
  }
  const store = !/^postgres(ql)?:\/\//.test(dataPath)
    ? await openSqliteStore(dataPath, now)
    : await openPgStore({ url: dataPath, poolSize: 4, now });
  const readLogs = () =>
    Deno.readTextFileSync(logFile).split("\n").filter((line) => line !== "")
      .map((line) => JSON.parse(line) as string);
  // Kept at close, so that a test may read the log after the server stopped, as on Deno.
  let closedLogs: string[] | null = null;
  return {
    get logs() {
      return closedLogs ?? readLogs();
    },
    store,
    adminUrl: first.adminUrl ?? null,
    async setStoreFault(fault) {
      const taken = new Promise<void>((resolve) => faultsTaken.push(resolve));
      await control.write(new TextEncoder().encode(`${JSON.stringify(fault)}\n`));
      await taken;
    },
    async close() {
      child.kill("SIGTERM");
      const { code } = await child.status;
      await drained;
      await store.close();
      closedLogs = readLogs();
      await cleanUp();
      if (code !== 0) throw new Error(`the Node.js server exited ${code}:\n${await stderr}`);
    },
  };
}

/** Answers each line asked on a loopback port with `now()` (testkit/node_host.ts asks). */
function _serveClock(now: () => number): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  void (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      void (async () => {
        const answer = new TextEncoder();
        try {
          for await (const chunk of conn.readable) {
            for (const byte of chunk) {
              if (byte === 10) await conn.write(answer.encode(`${now()}\n`));
            }
          }
        } catch {
          // The child went away.
        } finally {
          conns.delete(conn);
        }
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Already closed by the child.
        }
      }
    },
  };
}
