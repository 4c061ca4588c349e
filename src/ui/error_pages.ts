/**
 * The router's answers on an origin people browse ({base_url}, {auth_url}): an unknown path or
 * a wrong method is a page in the site's frame for a browser, saying what happened and where to
 * go next, and so is a store outage (withOutagePage); every other client keeps the plain answer.
 * Never cached: the same address may exist tomorrow.
 */
import type { Handler } from "../http/handler.ts";
import { logOutage, type LogSink, OUTAGE_RETRY_SECONDS } from "../http/request_log.ts";
import { htmlResponse } from "../http/responses.ts";
import { StoreUnavailableError } from "../store/store.ts";
import {
  type MethodNotAllowed,
  plainMethodNotAllowed,
  plainNotFound,
  type RouterOptions,
} from "../http/router.ts";
import { pathOf } from "../http/url_path.ts";
import { type Html, html } from "./html.ts";

export interface ErrorPageSite {
  /** The site's frame around a page's title (its h1) and content. */
  readonly frame: (title: string, main: Html) => string;
  /** Where a person goes next: the site's home, sign-in, the developer page. */
  readonly next: readonly { readonly href: string; readonly label: string }[];
  /** The site's security headers for pages, when not the ones of htmlResponse. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What happened, in plain words, for the path a person asked for. */
interface _Explanation {
  readonly title: string;
  readonly main: Html;
}

/** `notFound` and `methodNotAllowed` for createRouter on a site people browse. */
export function htmlErrorAnswers(site: ErrorPageSite): Required<RouterOptions> {
  const page = _page(site);
  const notFound: Handler = (request, context) =>
    wantsHtml(request)
      ? _cancelled(request, page(404, _notFound(pathOf(request.url)), {}))
      : plainNotFound(request, context);
  const methodNotAllowed: MethodNotAllowed = (request, allow) =>
    wantsHtml(request)
      ? page(405, _methodNotAllowed(request.method, pathOf(request.url), allow), {
        Allow: allow,
      })
      : plainMethodNotAllowed(request, allow);
  return { notFound, methodNotAllowed };
}

/**
 * A store outage met by a person's request: the page in the site's frame, 503 with Retry-After
 * and the request log's warning line. Any other client gets the request log's plain answer.
 */
export function withOutagePage(handler: Handler, site: ErrorPageSite, log: LogSink): Handler {
  const page = _page(site);
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || !wantsHtml(request)) throw error;
      logOutage(log, error);
      return await _cancelled(
        request,
        page(503, _outage(), { "Retry-After": String(OUTAGE_RETRY_SECONDS) }),
      );
    }
  };
}

function _page(site: ErrorPageSite) {
  return (status: number, explained: _Explanation, headers: Record<string, string>) =>
    htmlResponse(
      site.frame(
        explained.title,
        html`${explained.main}
        <p>Where to go next:</p>
        <ul>${
          site.next.map((link) => html`<li><a href="${link.href}">${link.label}</a></li>`)
        }</ul>`,
      ),
      { status, headers: { ...site.headers, ...headers, "Cache-Control": "no-store" } },
    );
}

function _outage(): _Explanation {
  return {
    title: "Briefly unavailable",
    main: html`<p>The service cannot reach its data right now. Wait a few seconds, then reload
      the page (or send the form again).</p>`,
  };
}

function _notFound(path: string): _Explanation {
  return {
    title: "Page not found",
    main: html`<p>There is no page at <code>${path}</code>. The address may be mistyped, or the
      page may have moved.</p>`,
  };
}

function _methodNotAllowed(
  method: string,
  path: string,
  allow: string,
): _Explanation {
  const read = /\bGET\b/.test(allow);
  return {
    title: "This page cannot be used that way",
    main: html`<p>The page at <code>${path}</code> does not take a ${method} request${
      read ? html`; open it in your browser instead` : ""
    }. If a form brought you here, go back, reload the page and send it again.</p>`,
  };
}

/**
 * Whether the client asked for HTML, as a browser does (`Accept: text/html,…`); a `q=0`
 * refuses it (RFC 9110 §12.5.1). Wildcards do not count: curl sends `*\/*` and wants text.
 */
export function wantsHtml(request: Request): boolean {
  const accept = request.headers.get("Accept");
  if (accept === null) return false;
  return accept.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    return type === "text/html" && !params.some((p) => /^q=0(\.0{0,3})?$/.test(p));
  });
}

/** An unread body is cancelled before the answer (the router does so for its 405). */
async function _cancelled(request: Request, response: Response): Promise<Response> {
  await request.body?.cancel();
  return response;
}
