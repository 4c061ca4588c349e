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

/** How long the mail server's answer stands: a storm of probes must not become one of SMTP. */
export const MAIL_VERDICT_MS = 5_000;

const NO_STORE = { "Cache-Control": "no-store" };

export function createAdminSite(deps: {
  readonly store: Store;
  readonly metrics: ServiceMetrics;
  readonly log: LogSink;
  readonly now: () => number;
  /** Resolves when the mail transport answers (checkMailTransport); throws what went wrong. */
  readonly checkMail: () => Promise<void>;
}): Handler {
  const { store, metrics, log } = deps;
  const mailAnswers = _cachedVerdict(deps.checkMail, deps.now, (error) =>
    // The cause goes to the log, once per check; the answer names only the part that failed.
    logEvent(log, {
      level: "error",
      message: "not ready: the mail server does not answer",
      ...describeError(error),
    }));
  const notReady = (reason: string) =>
    jsonResponse({ ready: false, reason }, { status: 503, headers: NO_STORE });
  return createRouter({
    "/metrics": {
      GET: async () =>
        new Response(await metrics.render(), {
          headers: { "Content-Type": EXPOSITION_TYPE, ...NO_STORE },
        }),
    },
    "/ready": {
      GET: async () => {
        try {
          // Any read will do: it answers only when the store does.
          await store.get(["ready"]);
        } catch (error) {
          logEvent(log, { level: "error", message: "not ready", ...describeError(error) });
          return notReady("the store does not answer");
        }
        if (!await mailAnswers()) return notReady("the mail server does not answer");
        return jsonResponse({ ready: true }, { headers: NO_STORE });
      },
    },
  });
}

/**
 * The check's verdict, kept MAIL_VERDICT_MS from when it started; requests meanwhile, and those
 * arriving while it runs, share it.
 */
function _cachedVerdict(
  check: () => Promise<void>,
  now: () => number,
  failed: (error: unknown) => void,
): () => Promise<boolean> {
  let verdict: { readonly at: number; readonly answers: Promise<boolean> } | undefined;
  return () => {
    if (verdict === undefined || now() - verdict.at >= MAIL_VERDICT_MS) {
      verdict = {
        at: now(),
        answers: check().then(() => true, (error: unknown) => {
          failed(error);
          return false;
        }),
      };
    }
    return verdict.answers;
  };
}
