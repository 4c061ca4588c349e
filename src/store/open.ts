/**
 * The store VESTIBULE_DATA names: a Deno KV file or `:memory:`, an SQLite file, or a PostgreSQL
 * database.
 */
import type { Config } from "../config/config.ts";
import { openKvStore } from "./kv_store.ts";
import { openSqliteStore } from "./sqlite_store.ts";
import type { Store } from "./store.ts";

/**
 * Opens the configured store. Its errors are one line with no password in it (a KV or SQLite file
 * with the wrong mode, an unreachable database, a refused login, a role without rights).
 */
export async function openStore(config: Config): Promise<Store> {
  if (config.postgres === null) {
    return config.store === "sqlite"
      ? await openSqliteStore(config.dataPath)
      : await openKvStore(config.dataPath);
  }
  // Loaded only here: a KV-backed server has no use for the PostgreSQL client (15 MiB resident
  // in a bare process; about 1.7 MiB of Vestibule's idle RSS, which shares most of its modules).
  const { openPgStore, PgStoreError } = await import("./pg_store.ts");
  const { url, passwordFile, poolSize } = config.postgres;
  let password = null;
  if (passwordFile !== null) {
    try {
      password = (await Deno.readTextFile(passwordFile)).replace(/\r?\n$/, "");
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
