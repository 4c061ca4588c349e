/**
 * `deno task bench store`: the two embedded stores side by side on this runtime, each a file in a
 * new temporary directory (as a server keeps it), through the Store interface the server uses:
 * checked commits one after another and 32 at once (an absent-check claim and its record, as a
 * sign-in code or a consent is taken), reads of a random one of 10,000 records, and listings of
 * 1,000 records (a business's audit page, a backup's batches). Each figure is the median of 3 runs
 * of `seconds` / 3 each, the two stores taking turns run by run; "loop held" is the longest the
 * event loop went without a turn during the 32 commits at once.
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

/**
 * Operations per second of `op` over `ms` milliseconds, `inFlight` at a time, and the longest the
 * event loop went without a turn meanwhile (between two runs of a timer chain): what a request
 * arriving during the run may wait before it is even read.
 */
async function rate(ms: number, inFlight: number, op: (i: number) => Promise<unknown>) {
  let done = 0;
  let longest = 0;
  let last = performance.now();
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (ticking) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const start = performance.now();
  const worker = async () => {
    while (performance.now() - start < ms) await op(done++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const perSecond = done / ((performance.now() - start) / 1000);
  ticking = false;
  await new Promise((resolve) => setTimeout(resolve, 0)); // the last tick, before the next run
  return { perSecond, longest };
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The operations measured, on one store filled with RECORDS records. */
async function operations(store: Store) {
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
  return [[1, claim], [32, claim], [1, read], [1, list]] as const;
}

export default {
  name: "store",
  async run({ seconds }) {
    const dir = await Deno.makeTempDir({ prefix: "vestibule-store-bench-" });
    const stores = await Promise.all(STORES.map(({ file, open }) => open(`${dir}/${file}`)));
    try {
      const ops = await Promise.all(stores.map(operations));
      // The stores take turns, run by run, so that the host's load falls on both alike.
      const figures = STORES.map(() => [] as number[]);
      const holds = STORES.map(() => [] as number[]);
      for (let op = 0; op < ops[0]!.length; op++) {
        const runs = STORES.map(() => [] as number[]);
        for (let run = 0; run < 3; run++) {
          for (const [i, storeOps] of ops.entries()) {
            const [inFlight, fn] = storeOps[op]!;
            const { perSecond, longest } = await rate((seconds * 1000) / 3, inFlight, fn);
            runs[i]!.push(perSecond);
            if (inFlight > 1) holds[i]!.push(longest);
          }
        }
        runs.forEach((values, i) => figures[i]!.push(median(values)));
      }
      const rows = STORES.map(({ name }, i) => {
        const [commits, commits32, reads, lists] = figures[i]!;
        return [
          name,
          commits!.toFixed(0),
          commits32!.toFixed(0),
          median(holds[i]!).toFixed(0),
          reads!.toFixed(0),
          lists!.toFixed(1),
          (1000 / lists!).toFixed(2),
        ];
      });
      console.log(
        table(
          [
            "store",
            "commits/s",
            "commits/s (32 at once)",
            "loop held, ms",
            "reads/s",
            "lists of 1,000/s",
            "ms a list",
          ],
          rows,
        ),
      );
      console.log(`\nDeno ${Deno.version.deno}, median of 3 runs of ${seconds / 3} s each`);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;
