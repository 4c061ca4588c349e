import type { Config } from "../config/config.ts";

export type ResourceCheck = { ok: true; resource: string } | { ok: false; description: string };

/**
 * RFC 8707: the one resource is {api_url}. An origin-only trailing slash and upper-case
 * scheme or host name the same resource; any other path, a query, a fragment, userinfo or
 * another host does not. Omitted, the canonical value is bound.
 */
export function canonicalResource(
  raw: string | null,
  config: Pick<Config, "apiUrl">,
): ResourceCheck {
  const refuse = {
    ok: false,
    description: `"resource" must equal ${JSON.stringify(config.apiUrl)}`,
  } as const;
  if (raw === null) return { ok: true, resource: config.apiUrl };
  if (raw.includes("#") || raw.includes("?") || !URL.canParse(raw)) return refuse;
  const url = new URL(raw);
  if (url.username !== "" || url.password !== "" || url.pathname !== "/") return refuse;
  // The raw path must be empty or a single "/" (URL parsing would fold "/." and "/%2e"), and
  // the authority only URI characters (RFC 3986 §3.2): URL parsing drops tabs, line breaks
  // and trailing spaces, and reads "\" as "/".
  if (!/^[a-z][a-z0-9+.-]*:\/\/[\w.~%!$&'()*+,;=:@[\]-]+\/?$/i.test(raw)) return refuse;
  return url.origin === config.apiUrl ? { ok: true, resource: config.apiUrl } : refuse;
}
