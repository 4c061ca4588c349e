import type { Handler } from "./handler.ts";
import { pathOf } from "./url_path.ts";

export type LogSink = (line: string) => void;

/**
 * One JSON line per request: method, host, path without query (queries may carry codes),
 * status and duration. Unexpected errors become a bare 500 and a log line without details
 * of the request body.
 */
export function withRequestLog(handler: Handler, log: LogSink): Handler {
  return async (request, context) => {
    const started = performance.now();
    let status = 500;
    try {
      const response = await handler(request, context);
      status = response.status;
      return response;
    } catch (error) {
      log(JSON.stringify({ level: "error", message: "unhandled", error: _describe(error) }));
      return new Response("Internal server error\n", {
        status: 500,
        headers: { "Content-Type": "text/plain; charset=utf-8" },
      });
    } finally {
      // Written by hand: the same text JSON.stringify gives for this object, with only the
      // request's strings escaped; stringifying a fresh object cost more than routing (bench site).
      const ms = Math.round((performance.now() - started) * 100) / 100;
      log(
        `{"method":${JSON.stringify(request.method)},"host":${
          JSON.stringify(request.headers.get("Host") ?? "")
        },"path":${JSON.stringify(pathOf(request.url))},"status":${status},"ms":${ms}}`,
      );
    }
  };
}

function _describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : "non-error thrown";
}
