/**
 * The operator listener (VESTIBULE_ADMIN_LISTEN): GET /metrics and GET /ready (README: Metrics
 * and readiness), and the operator API, `/v1/…` behind its bearer token, described by
 * GET /openapi.json (README: The operator API). Never on the public origins' listeners.
 */
import type { Accounts } from "../accounts/model.ts";
import type { Handler } from "../http/handler.ts";
import { describeError, logEvent, type LogSink, withRequestLog } from "../http/request_log.ts";
import { jsonResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { pathOf } from "../http/url_path.ts";
import type { Store } from "../store/store.ts";
import { createAuditLog } from "../workspace/audit.ts";
import { createOperatorUpdates } from "../workspace/operator_updates.ts";
import { createWorkspace } from "../workspace/workspace.ts";
import { createOperatorApi } from "./operator_api.ts";
import { buildOperatorOpenApi } from "./operator_openapi.ts";
import type { ServiceMetrics } from "./service_metrics.ts";

/** The text exposition format's media type (version 0.0.4). */
const EXPOSITION_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export function createAdminSite(deps: {
  readonly store: Store;
  readonly metrics: ServiceMetrics;
  readonly log: LogSink;
  readonly now: () => number;
  readonly accounts: Pick<Accounts, "getBusiness">;
  /** The operator API's bearer token (VESTIBULE_ADMIN_TOKEN_FILE), or null: the API is off. */
  readonly adminToken: string | null;
}): Handler {
  const { store, metrics, log, now } = deps;
  // The API's requests are logged like the public ones (never a scrape: Prometheus polls).
  const operatorApi = withRequestLog(
    createOperatorApi({
      token: deps.adminToken,
      updates: createOperatorUpdates({
        store,
        now,
        accounts: deps.accounts,
        workspace: createWorkspace(store),
        audit: createAuditLog(store, now),
      }),
    }),
    log,
  );
  const openApi = JSON.stringify(buildOperatorOpenApi(), null, 2) + "\n";
  const site = createRouter({
    "/openapi.json": {
      GET: () =>
        Promise.resolve(
          new Response(openApi, {
            headers: { "Content-Type": "application/json", "Cache-Control": "no-cache" },
          }),
        ),
    },
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
  return (request, context) =>
    pathOf(request.url).startsWith("/v1/") ? operatorApi(request, context) : site(request, context);
}
