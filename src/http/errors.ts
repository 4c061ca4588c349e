import type { Handler } from "./handler.ts";
import { htmlResponse } from "./responses.ts";

/** A client error that becomes a plain response at the HTTP boundary. */
export class HttpError extends Error {
  override name = "HttpError";
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * The error boundary of the human pages: an HttpError thrown by `handler` (a bad form, a body
 * over the cap or cut short) becomes the page `render` makes of it, with the error's status
 * and headers (`Connection: close` after a body it stopped reading); anything else propagates
 * (a bare 500 from the request log). Error pages are never cached.
 */
export function withHtmlErrors(
  handler: Handler,
  render: (error: HttpError) => string,
): Handler {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return htmlResponse(render(error), {
        status: error.status,
        headers: { ...error.headers, "Cache-Control": "no-store" },
      });
    }
  };
}
