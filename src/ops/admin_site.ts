/**
 * The operator listener (VESTIBULE_ADMIN_LISTEN): GET /metrics and GET /ready, never on the
 * public origins' listeners (README: Metrics and readiness).
 */
import type { Handler } from "../http/handler.ts";
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { jsonResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import type { Store } from "../store/store.ts";
import type { ServiceMetrics } from "./service_metrics.ts";

/** The text exposition format's media type (version 0.0.4). */
const EXPOSITION_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export function createAdminSite(deps: {
  readonly store: Store;
  readonly metrics: ServiceMetrics;
  readonly log: LogSink;
}): Handler {
  const { store, metrics, log } = deps;
  return createRouter({
    "/metrics": {
      GET: async () =>
        new Response(await metrics.render(), {
          headers: { "Content-Type": EXPOSITION_TYPE, "Cache-Control": "no-store" },
        }),
    },
    "/ready": {
      GET: async () => {
        try {
          // Any read will do: it answers only when the store does.
          await store.get(["ready"]);
        } catch (error) {
          // The cause goes to the log; the answer names only the part that failed.
          logEvent(log, { level: "error", message: "not ready", ...describeError(error) });
          return jsonResponse({ ready: false, reason: "the store does not answer" }, {
            status: 503,
            headers: { "Cache-Control": "no-store" },
          });
        }
        return jsonResponse({ ready: true }, { headers: { "Cache-Control": "no-store" } });
      },
    },
  });
}
