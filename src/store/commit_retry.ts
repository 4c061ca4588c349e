/**
 * The optimistic-commit loop written once: read, decide, commit against the versions read, and
 * when another writer committed first, read afresh and decide again.
 */

/** What an attempt returns when its commit lost to another writer: run it again. */
export const RETRY: unique symbol = Symbol("retry");

/** A cap on attempts (the first always runs), and the answer (or the throw) once every one of them lost. */
export interface RetryBound<T> {
  readonly attempts: number;
  readonly exhausted: () => T;
}

/**
 * Runs `attempt` until it returns something other than RETRY, which it returns. Each attempt
 * reads what it needs itself. Without a bound it tries for as long as commits keep losing (each
 * loss means another writer made progress).
 */
export async function retryCommit<T>(
  attempt: () => Promise<T | typeof RETRY>,
  bound?: RetryBound<T>,
): Promise<T> {
  for (let n = 1;; n++) {
    const result = await attempt();
    if (result !== RETRY) return result;
    if (bound !== undefined && n >= bound.attempts) return bound.exhausted();
  }
}
