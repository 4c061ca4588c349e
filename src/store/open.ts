/**
 * The store VESTIBULE_DATA names: a PostgreSQL database, or the runtime's embedded store in a
 * file (or `:memory:`). Deno embeds Deno KV; Node.js has no Deno KV, so until its SQLite store
 * (node:sqlite) takes the place below, Node.js needs VESTIBULE_DATA=postgres://….
 */
import type { Config } from "../config/config.ts";
import { openKvStore } from "./kv_store.ts";
import type { Store } from "./store.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";

/**
 * Opens the configured store. Its errors are one line with no password in it (a KV file with the
 * wrong mode, an unreachable database, a refused login, a role without rights).
 */
export class EmbeddedStoreError extends StartupError {
  override name = "EmbeddedStoreError";
}

export async function openStore(config: Config): Promise<Store> {
  if (config.postgres === null) {
    if (runtime.openKv === null) {
      throw new EmbeddedStoreError(
        `${runtime.description} has no embedded store yet: set VESTIBULE_DATA to a postgres:// URL`,
      );
    }
    return await openKvStore(config.dataPath);
  }
  // Loaded only here: a KV-backed server has no use for the PostgreSQL client (15 MiB resident
  // in a bare process; about 1.7 MiB of Vestibule's idle RSS, which shares most of its modules).
  const { openPgStore, PgStoreError } = await import("./pg_store.ts");
  const { url, passwordFile, poolSize } = config.postgres;
  let password = null;
  if (passwordFile !== null) {
    try {
      password = (await runtime.readTextFile(passwordFile)).replace(/\r?\n$/, "");
    } catch (error) {
      throw new PgStoreError(
        `cannot read VESTIBULE_DATA_PASSWORD_FILE=${JSON.stringify(passwordFile)}: ${
          (error as Error).name
        }`,
      );
    }
  }
  return await openPgStore({ url, password, poolSize });
}
