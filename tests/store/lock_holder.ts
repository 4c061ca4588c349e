// Another process holding SQLite's write lock on a KV file, the way a second writer would.
import assert from "node:assert/strict";

export interface LockHolder {
  /** Ends the other process's transaction; resolves once that process has exited. */
  release(): Promise<void>;
}

/** Resolves once the other process holds the lock (BEGIN IMMEDIATE on `path`). */
export async function holdWriteLock(path: string): Promise<LockHolder> {
  const holder = `
    import { DatabaseSync } from "node:sqlite";
    const db = new DatabaseSync(${JSON.stringify(path)});
    db.exec("BEGIN IMMEDIATE");
    console.log("locked");
    await Deno.stdin.read(new Uint8Array(1));
    db.exec("COMMIT");
    db.close();
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", holder],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  assert.match((await stdout.read()).value ?? "", /locked/);
  let released: Promise<void> | null = null;
  return {
    release() {
      return released ??= (async () => {
        const stdin = child.stdin.getWriter();
        await stdin.write(new Uint8Array([10]));
        await stdin.close();
        assert.equal((await child.status).code, 0);
        await stdout.cancel();
      })();
    },
  };
}
