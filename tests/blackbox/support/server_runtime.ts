// Which runtime the black-box tests serve from: Deno, or Node.js in the suite's Node.js pass
// (TEST_SERVER_RUNTIME=node; docs/testing.md). The Node.js is TEST_NODE_BINARY, else `node`.
import { openKvStore } from "../../../src/store/kv_store.ts";
import { openSqliteStore } from "../../../src/store/sqlite_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { nodeBinary } from "../../../testkit/node_binary.ts";

let _serverNode: string | null | undefined;

/**
 * The Node.js the servers under test run on in the Node.js pass, or null in the Deno pass. A
 * Node.js pass without a usable Node.js stops rather than quietly testing Deno twice.
 */
export function serverNode(): string | null {
  if (_serverNode !== undefined) return _serverNode;
  const wanted = Deno.env.get("TEST_SERVER_RUNTIME") ?? "deno";
  if (wanted !== "deno" && wanted !== "node") {
    throw new Error(`TEST_SERVER_RUNTIME=${wanted}: expected deno or node`);
  }
  _serverNode = wanted === "node" ? nodeBinary() : null;
  if (wanted === "node" && _serverNode === null) {
    throw new Error("TEST_SERVER_RUNTIME=node needs Node.js 24+ and node_modules (see above)");
  }
  return _serverNode;
}

/**
 * `ignore` for a test that cannot run against Node.js (`reason` says why; docs/testing.md lists
 * each): it runs on Deno, and the Node.js pass counts it as ignored rather than running it twice.
 */
export function denoOnly(_reason: string): boolean {
  return serverNode() !== null;
}

/**
 * The default embedded store's file under the project directory `dir` on the runtime under test:
 * Deno KV on Deno, SQLite on Node.js (src/store/open.ts).
 */
export function defaultStoreFile(dir: string): string {
  return storeFile(`${dir}/data/vestibule`);
}

/** An embedded store file named `stem` plus the extension of the runtime under test's kind. */
export function storeFile(stem: string): string {
  return `${stem}.${serverNode() === null ? "kv" : "sqlite"}`;
}

/** Opens an embedded store file of either kind, by its extension, as the server opens it. */
export function openStoreFile(path: string, now: () => number = Date.now): Promise<Store> {
  return path.endsWith(".sqlite") ? openSqliteStore(path, now) : openKvStore(path, now);
}

/** How the runtime under test words a read of `path` its permissions refuse (a RegExp's source). */
export function refusedReadWords(path: string): string {
  return serverNode() === null
    ? `Requires read access to "${path}"`
    : "Access to this API has been restricted. Use --allow-fs-read to manage permissions.";
}
