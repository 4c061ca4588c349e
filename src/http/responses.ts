import { HTML_SECURITY_HEADERS } from "./security_headers.ts";

const encoder = new TextEncoder();

export function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/json");
  return new Response(JSON.stringify(body), { ...init, headers });
}

export function textResponse(text: string, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "text/plain; charset=utf-8");
  return new Response(text, { ...init, headers });
}

/** An HTML page with the security headers every HTML response carries. */
export function htmlResponse(html: string, init: ResponseInit = {}): Response {
  const headers = new Headers(HTML_SECURITY_HEADERS);
  for (const [name, value] of new Headers(init.headers)) headers.set(name, value);
  headers.set("Content-Type", "text/html; charset=utf-8");
  return new Response(encoder.encode(html), { ...init, headers });
}

/**
 * A page made for one person (their data, a one-time form token): never stored by a cache.
 * `headers` go beside (a cookie, the page's own Content-Security-Policy).
 */
export function privatePage(
  html: string,
  status = 200,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return htmlResponse(html, { status, headers: { "Cache-Control": "no-store", ...headers } });
}

/**
 * The answer to HEAD, made from the answer to GET: the same status and header fields,
 * Content-Length included (RFC 9110 §9.3.2), and no body. Deno.serve states the length of a
 * body it sends, but says `Content-Length: 0` for a response without one, so a length the GET
 * answer leaves to the runtime is counted here (GET routes answer from memory, never a stream).
 */
export async function headResponse(get: Response): Promise<Response> {
  if (get.body === null) return get;
  const headers = new Headers(get.headers);
  if (headers.has("Content-Length")) await get.body.cancel();
  else headers.set("Content-Length", String((await get.arrayBuffer()).byteLength));
  return new Response(null, { status: get.status, statusText: get.statusText, headers });
}
