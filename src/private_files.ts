/**
 * Files only the owner may touch: the store (it holds the signing key's private half) and the
 * mail outbox (live sign-in links). Created 0600 in directories created 0700, whatever the
 * umask; an existing one that group or others may access is refused, like ssh refuses a key
 * file, since whoever could read it may already hold its secrets.
 */
import { StartupError } from "./startup_error.ts";
import { runtime } from "./runtime/current.ts";
export class PrivateFileError extends StartupError {
  override name = "PrivateFileError";
}

/** Creates the missing directories above `path`, owner-only. Existing ones are left as they are. */
export async function ensurePrivateParent(path: string): Promise<void> {
  const slash = path.lastIndexOf("/");
  if (slash > 0) await runtime.mkdir(path.slice(0, slash), { recursive: true, mode: 0o700 });
}

/** Creates `path` (and its directories) owner-only when missing; refuses it when too open. */
export async function ensurePrivateFile(path: string): Promise<void> {
  await ensurePrivateParent(path);
  // Neither truncates nor moves an existing file; `mode` applies only when it is created.
  _refuseOpen(path, await runtime.touch(path, 0o600));
}

/**
 * An embedded store's file (Deno KV and SQLite both are SQLite files) and the `-wal`/`-shm`
 * files SQLite keeps beside it with the file's mode: owner-only; nothing for `:memory:`.
 */
export async function ensurePrivateStoreFile(path: string): Promise<void> {
  if (path === ":memory:") return;
  for (const sidecar of ["-wal", "-shm"]) await refuseOpenFile(path + sidecar);
  await ensurePrivateFile(path);
}

/** Refuses `path` when it exists and group or others may access it. */
export async function refuseOpenFile(path: string): Promise<void> {
  try {
    _refuseOpen(path, await runtime.fileMode(path));
  } catch (error) {
    if (!runtime.isNotFound(error)) throw error;
  }
}

/** `mode` is null where the system has no Unix modes (Windows). */
function _refuseOpen(path: string, mode: number | null): void {
  if (mode === null || (mode & 0o077) === 0) return;
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  throw new PrivateFileError(
    `${path} is open to group or others (mode ${octal}); make it owner-only: chmod 600 ${path}`,
  );
}
