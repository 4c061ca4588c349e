/**
 * Reloading VESTIBULE_UPSTREAMS without a restart (SIGHUP, main.ts): the file is read and checked
 * whole by start-up's own parser, and refused whole, with start-up's one line, while the running
 * upstreams go on. A file that passes replaces the set (upstream_set.ts) and the scope catalogue;
 * pins, holds and approvals are in the store, keyed by upstream name, so they carry over, and a
 * token keeps the scopes it was granted, so an upstream that comes back serves it again.
 */
import { logEvent, type LogSink } from "../http/request_log.ts";
import type { LiveScopeCatalogue } from "../oauth/scopes.ts";
import { StartupError } from "../startup_error.ts";
import { missingKeyFile } from "./connect/vault.ts";
import type { UpstreamSet } from "./upstream_set.ts";
import { loadUpstreams } from "./upstreams_file.ts";

export interface UpstreamsReloadDeps {
  /** VESTIBULE_UPSTREAMS; null when it is unset (nothing to reload). */
  readonly file: string | null;
  /** VESTIBULE_UPSTREAM_KEY_FILE, which an `"auth": "person"` upstream needs. */
  readonly keyFile: string | null;
  readonly gateway: UpstreamSet;
  readonly scopes: LiveScopeCatalogue;
  readonly log: LogSink;
}

/** One reload: resolves once it is applied (or refused), never rejects on a bad file. */
export function createUpstreamsReload(deps: UpstreamsReloadDeps): () => Promise<void> {
  const { file, log } = deps;
  // Signals may come faster than a reload ends: one at a time, in order.
  let last = Promise.resolve();
  const reload = async () => {
    if (file === null) {
      logEvent(log, {
        level: "warn",
        message: "upstreams not reloaded: VESTIBULE_UPSTREAMS is not set",
      });
      return;
    }
    let next;
    try {
      next = await loadUpstreams(file);
      const keyProblem = missingKeyFile(next, deps.keyFile);
      if (keyProblem !== null) throw new StartupError(keyProblem);
    } catch (error) {
      if (!(error instanceof StartupError)) throw error;
      logEvent(log, {
        level: "error",
        message: `upstreams file refused, the running upstreams stay: ${error.line}`,
      });
      return;
    }
    deps.scopes.learn(next);
    const changes = await deps.gateway.replace(next);
    logEvent(log, { level: "info", message: "upstreams reloaded", ...changes });
  };
  return () => {
    const done = last.then(reload);
    last = done.catch(() => {});
    return done;
  };
}
