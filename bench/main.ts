/**
 * `deno task bench [section…] [--seconds=N] [--connections=N] [--no-log] [--runtime=node]`
 *
 * Runs every `bench/*_bench.ts` in name order, or only the named sections. A section is a
 * module whose default export is a `BenchSection`:
 *
 *     import type { BenchSection } from "./main.ts";
 *     export default {
 *       name: "mcp",
 *       async run({ seconds, connections }) { … print its own table … },
 *     } satisfies BenchSection;
 *
 * Helpers: bench/load.ts (`runLoad`: wrk or a Deno client, requests/s and p99),
 * bench/processes.ts (`startServerProcess`: the server under test in its own process, with
 * its peak memory) and bench/table.ts. Results go to stdout; a section throws when it
 * cannot measure.
 */

export { table } from "./table.ts";

/** The runtime Vestibule is run on. */
export type BenchRuntime = "deno" | "node";

export interface BenchOptions {
  /** Length of one measured run. */
  readonly seconds: number;
  /** Concurrent connections of the load generator. */
  readonly connections: number;
  /** Whether servers started as users run them write their request log (`--no-log`: no). */
  readonly requestLog: boolean;
  /**
   * The runtime the sections that run Vestibule as users do start it on (`--runtime=node`:
   * `npm start`'s command with TEST_NODE_BINARY or the `node` on PATH); Deno by default.
   */
  readonly runtime: BenchRuntime;
}

export interface BenchSection {
  /** Used to select sections on the command line. */
  readonly name: string;
  run(options: BenchOptions): Promise<void>;
}

async function main(args: readonly string[]): Promise<number> {
  const wanted = args.filter((a) => !a.startsWith("--"));
  const option = (name: string, fallback: number) => {
    const found = args.find((a) => a.startsWith(`--${name}=`));
    const value = found === undefined ? fallback : Number(found.slice(name.length + 3));
    if (!Number.isFinite(value) || value <= 0) {
      throw new Error(`--${name} must be a positive number`);
    }
    return value;
  };
  const runtime = args.find((a) => a.startsWith("--runtime="))?.slice(10) ?? "deno";
  if (runtime !== "deno" && runtime !== "node") throw new Error("--runtime is deno or node");
  const options: BenchOptions = {
    runtime,
    seconds: option("seconds", 5),
    connections: option("connections", 32),
    requestLog: !args.includes("--no-log"),
  };
  const files: string[] = [];
  for await (const entry of Deno.readDir(new URL(".", import.meta.url))) {
    if (entry.isFile && entry.name.endsWith("_bench.ts")) files.push(entry.name);
  }
  files.sort();
  let ran = 0;
  for (const file of files) {
    const section = (await import(new URL(file, import.meta.url).href)).default as
      | BenchSection
      | undefined;
    if (typeof section?.run !== "function") {
      console.error(`bench: skipping ${file}: its default export is not a BenchSection`);
      continue;
    }
    if (wanted.length > 0 && !wanted.includes(section.name)) continue;
    console.log(`\n## ${section.name} (${file})\n`);
    await section.run(options);
    ran++;
  }
  if (ran === 0) {
    console.error(`no bench section matched ${wanted.join(", ")}`);
    return 1;
  }
  return 0;
}

// No top-level await: sections import this module, which must finish evaluating first.
if (import.meta.main) main(Deno.args).then(Deno.exit);
