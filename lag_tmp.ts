import { openKvStore } from "./src/store/kv_store.ts";
import { openSqliteStore } from "./src/store/sqlite_store.ts";
const dir = await Deno.makeTempDir();
for (const [name, open] of [["kv", () => openKvStore(`${dir}/a.kv`)], ["sqlite", () => openSqliteStore(`${dir}/a.sqlite`)]] as const) {
  const store = await open();
  for (const [what, op] of [["commits", (n: number) => store.commit([{ key: ["c", n], version: null }], [{ type: "set", key: ["c", n], value: 1 }])], ["reads", (n: number) => store.get(["c", n % 100])]] as const) {
  const gaps: number[] = [];
  let last = performance.now();
  let stop = false;
  const tick = () => { const t = performance.now(); gaps.push(t - last); last = t; if (!stop) setTimeout(tick, 0); };
  setTimeout(tick, 0);
  let n = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (performance.now() - start < 2000) await op(n++);
  }));
  stop = true;
  gaps.sort((a, b) => a - b);
  console.log(name, what, n, "loop gap p50", gaps[Math.floor(gaps.length / 2)]!.toFixed(2), "p99", gaps[Math.floor(gaps.length * 0.99)]!.toFixed(2), "max", gaps.at(-1)!.toFixed(2), "ticks", gaps.length);
  }
  await store.close();
}
await Deno.remove(dir, { recursive: true });
