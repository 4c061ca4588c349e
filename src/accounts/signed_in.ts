/**
 * The guard of every page for signed-in people: anyone else is sent to sign in and back to the
 * same address (path and query), and a client error the page throws (HttpError: a bad form, a
 * body over the cap) becomes the page `refused` renders for the person, never a 500.
 */
import { type HttpError, withHtmlErrors } from "../http/errors.ts";
import type { Handler } from "../http/handler.ts";
import type { Session, Sessions } from "./model.ts";

export function signedInPage(
  sessions: Sessions,
  handler: (request: Request, session: Session) => Promise<Response>,
  refused: (session: Session, error: HttpError) => string,
  signedOut: (url: URL) => Response = (url) =>
    seeOther(sessions.signInUrl(url.pathname + url.search)),
): Handler {
  return async (request, context) => {
    const session = await sessions.current(request);
    if (!session) {
      await request.body?.cancel();
      return signedOut(new URL(request.url));
    }
    return await withHtmlErrors(
      (request) => handler(request, session),
      (error) => refused(session, error),
    )(request, context);
  };
}

/** 303 See Other, never cached; `headers` besides (a cookie set or cleared). */
export function seeOther(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status: 303,
    headers: { Location: location, "Cache-Control": "no-store", ...headers },
  });
}
