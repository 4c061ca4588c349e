import type { Handler } from "./handler.ts";
import { isoClock } from "./iso_clock.ts";
import { pathOf } from "./url_path.ts";
import { StoreUnavailableError } from "../store/store.ts";

export type LogSink = (line: string) => void;

/** The route of a request no route table matched (unknown Host or path): one shared label. */
export const UNMATCHED_ROUTE = "other";

/** When a client should try again after the store did not answer: a restart's usual length. */
export const OUTAGE_RETRY_SECONDS = 5;

/**
 * One JSON line per request: `time` (ISO 8601), `level`, request `id` (also the X-Request-Id
 * response header), `method`, `host`, `path` without query (queries may carry codes), `route`
 * (the pattern the path router matched, `other` when none did), `status`, `ms` and `client`
 * (the client address). A store that does not answer is a 503 with Retry-After and a warning
 * line (logOutage). Unexpected
 * errors become a bare 500 and an error line with the stack
 * and the request id (for the operator; never in a response) but without details of the
 * request body. `observe`, when given, is told each answer's Host, route, status and seconds
 * (the metrics).
 */
export function withRequestLog(
  handler: Handler,
  log: LogSink,
  observe?: (host: string | null, route: string, status: number, seconds: number) => void,
): Handler {
  const isoTime = isoClock();
  return async (request, context) => {
    const started = performance.now();
    const id = crypto.randomUUID();
    let status = 500;
    try {
      const response = await handler(request, context);
      status = response.status;
      response.headers.set("X-Request-Id", id);
      return response;
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        // The operator's outage, not a defect: the client is told to come back (RFC 9110 15.6.4).
        status = 503;
        logOutage(log, error, { id });
        return new Response("The service is briefly unavailable; try again shortly.\n", {
          status,
          headers: {
            "Content-Type": "text/plain; charset=utf-8",
            "Retry-After": String(OUTAGE_RETRY_SECONDS),
            "X-Request-Id": id,
          },
        });
      }
      logEvent(log, { level: "error", message: "unhandled", id, ...describeError(error) });
      return new Response("Internal server error\n", {
        status: 500,
        headers: { "Content-Type": "text/plain; charset=utf-8", "X-Request-Id": id },
      });
    } finally {
      // Written by hand: the same text JSON.stringify gives for this object, with only the
      // request's strings escaped; stringifying a fresh object cost more than routing (bench site).
      const elapsed = performance.now() - started;
      const route = context.route ?? UNMATCHED_ROUTE;
      observe?.(request.headers.get("Host"), route, status, elapsed / 1000);
      const ms = Math.round(elapsed * 100) / 100;
      log(
        `{"time":"${isoTime(Date.now())}","level":"${
          status >= 500 ? "error" : "info"
        }","id":"${id}","method":${JSON.stringify(request.method)},"host":${
          JSON.stringify(request.headers.get("Host") ?? "")
        },"path":${JSON.stringify(pathOf(request.url))},"route":${
          JSON.stringify(route)
        },"status":${status},"ms":${ms},"client":${JSON.stringify(context.clientAddress)}}`,
      );
    }
  };
}

/** Any other log line: `time` first, then `level`, `message` and the event's fields. */
export function logEvent(
  log: LogSink,
  event:
    & { readonly level: "info" | "warn" | "error"; readonly message: string }
    & Record<
      string,
      unknown
    >,
): void {
  log(JSON.stringify({ time: new Date().toISOString(), ...event }));
}

/**
 * The one line a request that met a store outage leaves: a warning naming the cause, without a
 * stack (it finds no bug, and an outage would write one per request).
 */
export function logOutage(
  log: LogSink,
  error: StoreUnavailableError,
  fields: Record<string, unknown> = {},
): void {
  logEvent(log, {
    level: "warn",
    message: "store unavailable",
    ...fields,
    error: `${error.name}: ${error.message}`,
  });
}

/**
 * The fields an error log line carries about an unexpected error: `error` (`name: message`)
 * and, for an Error, its `stack`, which is what finds the bug. Server-side only: a response
 * never carries either.
 */
export function describeError(error: unknown): { error: string; stack?: string } {
  if (!(error instanceof Error)) return { error: "non-error thrown" };
  const described = `${error.name}: ${error.message}`;
  return error.stack === undefined
    ? { error: described }
    : { error: described, stack: error.stack };
}
