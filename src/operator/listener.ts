/**
 * The operator listener (VESTIBULE_ADMIN_LISTEN): GET /metrics and GET /ready (docs/operating.md: Metrics
 * and readiness), and the operator API, `/v1/…` behind its bearer token, described by
 * GET /openapi.json (docs/integrating.md: The operator API). Never on the public origins' listeners.
 */
import type { Accounts } from "../accounts/model.ts";
import type { Handler } from "../http/handler.ts";
import { describeError, logEvent, type LogSink, withRequestLog } from "../http/request_log.ts";
import { jsonResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { pathOf } from "../http/url_path.ts";
import type { Store } from "../store/store.ts";
import { createAuditLog } from "../workspace/domain/audit.ts";
import { createOperatorUpdates } from "./operator_updates.ts";
import { createWorkspace } from "../workspace/domain/workspace.ts";
import { createOperatorApi } from "./operator_api.ts";
import { buildOperatorOpenApi } from "./operator_openapi.ts";
import type { ServiceMetrics } from "./service_metrics.ts";

/** The text exposition format's media type (version 0.0.4). */
const EXPOSITION_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** How long the mail server's answer stands: a storm of probes must not become one of SMTP. */
export const MAIL_VERDICT_MS = 5_000;

/**
 * How long GET /ready waits for the store to answer its read: a probe must hear "not ready"
 * well within any prober's own timeout (Kubernetes' default is 1 s, others wait longer), and a
 * healthy store answers in milliseconds.
 */
export const READY_DEADLINE_MS = 2_000;

const NO_STORE = { "Cache-Control": "no-store" };

export function createAdminSite(deps: {
  readonly store: Store;
  readonly metrics: ServiceMetrics;
  readonly log: LogSink;
  readonly now: () => number;
  /** Resolves when the mail transport answers (checkMailTransport); throws what went wrong. */
  readonly checkMail: () => Promise<void>;
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
  const mailAnswers = _cachedVerdict(deps.checkMail, deps.now, (error) =>
    // The cause goes to the log, once per check; the answer names only the part that failed.
    logEvent(log, {
      level: "error",
      message: "not ready: the mail server does not answer",
      ...describeError(error),
    }));
  // Any read will do: it answers only when the store does.
  const storeAnswers = _sharedProbe(
    () => store.get(["ready"]),
    READY_DEADLINE_MS,
    (error) => logEvent(log, { level: "error", message: "not ready", ...describeError(error) }),
  );
  const notReady = (reason: string) =>
    jsonResponse({ ready: false, reason }, { status: 503, headers: NO_STORE });
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
          headers: { "Content-Type": EXPOSITION_TYPE, ...NO_STORE },
        }),
    },
    "/ready": {
      GET: async () => {
        if (!await storeAnswers()) return notReady("the store does not answer");
        if (!await mailAnswers()) return notReady("the mail server does not answer");
        return jsonResponse({ ready: true }, { headers: NO_STORE });
      },
    },
  });
  return (request, context) =>
    pathOf(request.url).startsWith("/v1/") ? operatorApi(request, context) : site(request, context);
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

/**
 * A probe of the store shared by every request while it runs, so that a storm of probes of a
 * frozen database makes one read, not one each; each request waits for it until `deadlineMs`
 * after it started, and one that comes later than that hears false at once. A read that fails
 * or misses the deadline is told to `failed` once.
 */
function _sharedProbe(
  read: () => Promise<unknown>,
  deadlineMs: number,
  failed: (error: unknown) => void,
): () => Promise<boolean> {
  interface Probe {
    readonly started: number;
    readonly answered: Promise<boolean>;
    told: boolean;
  }
  let probe: Probe | null = null;
  const tell = (current: Probe, error: unknown) => {
    if (!current.told) failed(error);
    current.told = true;
  };
  const start = (): Probe => {
    const current: Probe = {
      started: performance.now(),
      answered: read().then(() => true, (error: unknown) => {
        tell(current, error);
        return false;
      }),
      told: false,
    };
    current.answered.finally(() => {
      if (probe === current) probe = null;
    });
    return current;
  };
  return async () => {
    const current = probe ??= start();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>((resolve) => {
      const left = Math.max(0, current.started + deadlineMs - performance.now());
      timer = setTimeout(resolve, left, false);
    });
    const answers = await Promise.race([current.answered, late]);
    clearTimeout(timer);
    if (!answers) tell(current, new Error(`no answer within ${deadlineMs} ms`));
    return answers;
  };
}
