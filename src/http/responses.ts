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

/** The same response without a body, as HEAD and 304 need it. */
export function withoutBody(response: Response, status = response.status): Response {
  response.body?.cancel();
  return new Response(null, { status, headers: response.headers });
}
