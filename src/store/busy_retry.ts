/**
 * Writes to an SQLite file another process is writing (Deno KV's file, or the SQLite store's):
 * SQLite refuses them with "database is locked" and nothing is written, so the whole write runs
 * again after a pause, checks included. Shared by kv_store.ts and sqlite_store.ts.
 */
import { StoreBusyError } from "./store.ts";

/**
 * What to do before retry number `attempt` of a write SQLite found busy (another process
 * writing): wait for the returned promise, or give up on null. Tests inject their own.
 */
export type BusyPause = (attempt: number) => Promise<void> | null;

/** Retries of one write; the pauses double from 10 ms up to 250 ms: about 4 s in all. */
const BUSY_RETRIES = 20;

/** The default pause, randomly shortened so that two processes fall out of step. */
export function backoff(attempt: number): Promise<void> | null {
  if (attempt > BUSY_RETRIES) return null;
  const delay = Math.min(10 * 2 ** (attempt - 1), 250) * (0.5 + Math.random() / 2);
  return new Promise((resolve) => setTimeout(resolve, delay));
}

/** Whether SQLite said the file is locked (Deno KV's TypeError, node:sqlite's Error). */
export function isBusy(error: unknown): boolean {
  return error instanceof Error && error.message.includes("database is locked");
}

/** Runs `write`, again after each pause while it meets a locked file; StoreBusyError at the end. */
export async function retryWhenBusy<T>(write: () => Promise<T> | T, pause: BusyPause): Promise<T> {
  for (let attempts = 1;; attempts++) {
    try {
      return await write();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const paused = pause(attempts);
      if (paused === null) {
        throw new StoreBusyError(
          `the store stayed locked by another process through ${attempts} attempts`,
        );
      }
      await paused;
    }
  }
}
