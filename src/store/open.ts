/**
 * The store VESTIBULE_DATA names: a Deno KV file or `:memory:`, an SQLite file, or a PostgreSQL
 * database. Node.js has no Deno KV: there the embedded store is SQLite (node:sqlite), and the
 * default file is ./data/vestibule.sqlite.
 */
import type { Config } from "../config/config.ts";
import { maskDataUrl } from "../config/data_url.ts";
import { openKvStore } from "./kv_store.ts";
import { openSqliteStore } from "./sqlite_store.ts";
import type { Store } from "./store.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";
import { SETTINGS } from "../config/settings.ts";

/**
 * Opens the configured store. Its errors are one line with no password in it (a KV or SQLite file
 * with the wrong mode, an unreachable database, a refused login, a role without rights).
 */
export class EmbeddedStoreError extends StartupError {
  override name = "EmbeddedStoreError";
}

export async function openStore(config: Config): Promise<Store> {
  if (config.postgres === null) {
    if (config.store === "sqlite") return await openSqliteStore(config.dataPath);
    if (runtime.openKv !== null) return await openKvStore(config.dataPath);
    return await openSqliteStore(await _sqliteInsteadOfKv(config.dataPath));
  }
  // Loaded only here: a KV-backed server has no use for the PostgreSQL client (15 MiB resident
  // in a bare process; about 1.7 MiB of Vestibule's idle RSS, which shares most of its modules).
  const { openPgStore, PgStoreError } = await import("./pg_store.ts");
  const { url, passwordFile, poolSize, deadlineMs } = config.postgres;
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
  return await openPgStore({ url, password, poolSize, deadlineMs });
}

/** Node.js's default SQLite file, where Deno's default is the Deno KV file beside it. */
const NODE_DEFAULT_DATA = "./data/vestibule.sqlite";

/**
 * VESTIBULE_DATA as messages about the store name it (password masked): on a runtime without Deno
 * KV the default is the SQLite file opened in its place, which is the file the operator looks for.
 */
export function describeDataSetting(config: Config): string {
  const path = runtime.openKv === null && config.dataPath === SETTINGS.dataPath.default
    ? NODE_DEFAULT_DATA
    : config.dataPath;
  return `VESTIBULE_DATA=${JSON.stringify(maskDataUrl(path))}`;
}

/**
 * On a runtime without Deno KV, the SQLite file that takes the place of the Deno KV one
 * VESTIBULE_DATA names: in memory for `:memory:`, the default for the default. A Deno KV file
 * that exists is refused rather than left behind with an empty store beside it.
 */
async function _sqliteInsteadOfKv(dataPath: string): Promise<string> {
  if (dataPath === ":memory:") return dataPath;
  const named = dataPath !== SETTINGS.dataPath.default;
  if (named || await _exists(dataPath)) {
    throw new EmbeddedStoreError(
      `${runtime.description} has no Deno KV to open VESTIBULE_DATA=${dataPath}: ` +
        `name an SQLite file (${NODE_DEFAULT_DATA}) and move the data with ` +
        "admin export on Deno and admin import here (docs/operating.md)",
    );
  }
  return NODE_DEFAULT_DATA;
}

async function _exists(path: string): Promise<boolean> {
  try {
    await runtime.fileMode(path);
    return true;
  } catch (error) {
    if (runtime.isNotFound(error)) return false;
    throw error;
  }
}
