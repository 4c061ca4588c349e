/**
 * Redirect URI rules: what may be registered (RFC 8252, RFC 9700 §2.1) and how a presented
 * URI is compared with a registered one (exact, except the port of loopback http).
 */

/** Schemes that run code or read local data when a browser is sent there. */
const DANGEROUS_SCHEMES = new Set([
  "javascript:",
  "data:",
  "file:",
  "vbscript:",
  "about:",
  "blob:",
  "filesystem:",
]);

const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d{1,5})?(?=[/?]|$)/;

/** Why `raw` cannot be registered as a redirect URI, or null when it can. */
export function redirectUriProblem(raw: string): string | null {
  if (raw.length > 2000) return "is longer than 2000 characters";
  // Whitespace and control characters would be stripped by URL parsers (`java\tscript:`).
  // deno-lint-ignore no-control-regex -- control characters are what we refuse
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return "contains whitespace or control characters";
  if (raw.includes("#")) return "must not contain a fragment";
  if (raw.includes("*")) return "must not contain wildcards";
  if (!URL.canParse(raw)) return "is not an absolute URI";
  const url = new URL(raw);
  if (DANGEROUS_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol} scheme`;
  if (url.username !== "" || url.password !== "" || /^[^:]+:\/\/[^/?]*@/.test(raw)) {
    return "must not contain userinfo";
  }
  if (url.protocol === "https:") return url.hostname === "" ? "must name a host" : null;
  if (url.protocol === "http:") {
    return LOOPBACK_REDIRECT.test(raw)
      ? null
      : "must use https, or http only on 127.0.0.1, [::1] or localhost";
  }
  // RFC 8252 §7.1: a private-use scheme (ours must look like one: letters, digits, + - .).
  if (!/^[a-z][a-z0-9+.-]*:/i.test(raw)) return "has an invalid scheme";
  if (["ws:", "wss:", "ftp:", "mailto:", "tel:", "sms:"].includes(url.protocol)) {
    return `must not use the ${url.protocol} scheme`;
  }
  return null;
}

/**
 * Whether a registrable redirect URI is one a native application may use (OpenID Connect
 * Registration §2, RFC 8252 §7.1 and §7.3): a private-use scheme or loopback http.
 */
export function isNativeRedirectUri(uri: string): boolean {
  // Every registrable http URI is loopback already (redirectUriProblem).
  return new URL(uri).protocol !== "https:";
}

/**
 * RFC 9700 §4.1.1: exact string comparison; RFC 8252 §7.3: for loopback http the port may
 * differ, while scheme, host, path and query stay exact.
 */
export function redirectUriMatches(registered: string, presented: string): boolean {
  if (registered === presented) return true;
  const a = _loopbackPrefix(registered);
  const b = _loopbackPrefix(presented);
  if (!a || !b) return false;
  return a[1] === b[1] && registered.slice(a[0].length) === presented.slice(b[0].length);
}

/** The loopback scheme, host and port of `uri`, when the port is one (RFC 6335 §6: ≤ 65535). */
function _loopbackPrefix(uri: string): RegExpMatchArray | null {
  const match = uri.match(LOOPBACK_REDIRECT);
  return match && Number(match[2]?.slice(1) ?? 0) <= 65535 ? match : null;
}
