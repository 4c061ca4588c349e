/**
 * `deno task bench store`: the two embedded stores side by side on this runtime, each a file in a
 * new temporary directory (as a server keeps it), through the Store interface the server uses:
 * checked commits one after another and 32 at once (an absent-check claim and its record, as a
 * sign-in code or a consent is taken), reads of a random one of 10,000 records, and listings of
 * 1,000 records (a business's audit page, a backup's batches). Each figure is the median of 3 runs
 * of `seconds` / 3 each.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { openKvStore } from "../src/store/kv_store.ts";
import { openSqliteStore } from "../src/store/sqlite_store.ts";
import type { Store } from "../src/store/store.ts";

const STORES: readonly { name: string; file: string; open: (path: string) => Promise<Store> }[] = [
  { name: "Deno KV", file: "vestibule.kv", open: (path) => openKvStore(path) },
  { name: "SQLite", file: "vestibule.sqlite", open: (path) => openSqliteStore(path) },
];

/** Records read at random, and under the listed prefix. */
const RECORDS = 10_000;
const LISTED = 1_000;
/** A record about the size of an account or a grant. */
const VALUE = { id: "x".repeat(22), email: "someone@example.com", scopes: ["a", "b"], n: 0 };

/** Operations per second of `op` over `ms` milliseconds, `inFlight` at a time. */
async function rate(ms: number, inFlight: number, op: (i: number) => Promise<unknown>) {
  let done = 0;
  const start = performance.now();
  const worker = async () => {
    while (performance.now() - start < ms) await op(done++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return done / ((performance.now() - start) / 1000);
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(open: (path: string) => Promise<Store>, file: string, seconds: number) {
  const dir = await Deno.makeTempDir({ prefix: "vestibule-store-bench-" });
  const store = await open(`${dir}/${file}`);
  try {
    for (let i = 0; i < RECORDS; i += 500) {
      await store.commit(
        [],
        Array.from({ length: 500 }, (_, j) => ({
          type: "set" as const,
          key: ["bench", "record", i + j],
          value: { ...VALUE, n: i + j },
        })),
      );
    }
    const ms = (seconds * 1000) / 3;
    let claims = 0;
    const claim = () => {
      const key = ["bench", "claim", claims++];
      return store.commit([{ key, version: null }], [
        { type: "set", key, value: VALUE, expireIn: 600_000 },
      ]);
    };
    const read = () => store.get(["bench", "record", Math.floor(Math.random() * RECORDS)]);
    const list = async () => {
      let n = 0;
      for await (const _ of store.list(["bench", "record"], { limit: LISTED })) n++;
      if (n !== LISTED) throw new Error(`listed ${n} records, not ${LISTED}`);
    };
    const runs = async (inFlight: number, op: () => Promise<unknown>) => {
      const results = [];
      for (let run = 0; run < 3; run++) results.push(await rate(ms, inFlight, op));
      return median(results);
    };
    return {
      commits: await runs(1, claim),
      commits32: await runs(32, claim),
      reads: await runs(1, read),
      lists: await runs(1, list),
    };
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

export default {
  name: "store",
  async run({ seconds }) {
    const rows: string[][] = [];
    for (const { name, file, open } of STORES) {
      const r = await measure(open, file, seconds);
      rows.push([
        name,
        r.commits.toFixed(0),
        r.commits32.toFixed(0),
        r.reads.toFixed(0),
        r.lists.toFixed(1),
        (1000 / r.lists).toFixed(2),
      ]);
    }
    console.log(
      table(
        [
          "store",
          "commits/s",
          "commits/s (32 at once)",
          "reads/s",
          "lists of 1,000/s",
          "ms a list",
        ],
        rows,
      ),
    );
    console.log(`\nDeno ${Deno.version.deno}, median of 3 runs of ${seconds / 3} s each`);
  },
} satisfies BenchSection;
