// The operator commands in process, their output collected: what `deno task admin` would print.
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { type Config, resolveConfig } from "../../../src/config/config.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { prepareSchema } from "../../../src/schema.ts";
import type { Store } from "../../../src/store/store.ts";

export interface AdminResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export type AdminRun = (...args: string[]) => Promise<AdminResult>;

/** Runs commands against `store`; `input` is what a command reads from standard input. */
export function adminRunner(
  store: Store,
  options: {
    readonly now?: () => number;
    readonly input?: () => Promise<string>;
    /** An in-memory store's configuration by default. */
    readonly config?: Config;
    /** The templates `check` reads; static/ by default. */
    readonly staticDir?: URL;
  } = {},
): AdminRun {
  const config = options.config ?? resolveConfig({ VESTIBULE_DATA: ":memory:" });
  return async (...args) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdminCommand(args, {
      config,
      store,
      now: options.now ?? Date.now,
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      ...(options.input ? { input: options.input } : {}),
      ...(options.staticDir ? { staticDir: options.staticDir } : {}),
    });
    return { code, out: out.join("\n"), err: err.join("\n") };
  };
}

/**
 * Runs `test` on a new in-memory store (its schema stamped first when `stamped`, as start-up
 * does) with a runner of commands on it, then closes the store.
 */
export async function withStore(
  test: (store: Store, run: AdminRun) => Promise<void>,
  options: { readonly stamped?: boolean } = {},
): Promise<void> {
  const store = await openKvStore(":memory:");
  try {
    if (options.stamped) await prepareSchema(store, Date.now);
    await test(store, adminRunner(store));
  } finally {
    store.close();
  }
}
