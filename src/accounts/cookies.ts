import type { Config } from "../config/config.ts";

/**
 * Cookies of {auth_url}. On https the `__Host-` prefix pins them to this exact host
 * (Secure, Path=/, no Domain); plain http is only allowed on loopback (config.ts), where the
 * name carries the port instead: cookies ignore ports, so two instances on one machine (one the
 * upstream of the other) would otherwise overwrite each other's session.
 */
export function cookieName(config: Pick<Config, "authUrl">, base: string): string {
  if (_secure(config)) return `__Host-${base}`;
  const url = new URL(config.authUrl);
  return `${base}_${url.port === "" ? "80" : url.port}`;
}

export function setCookie(
  config: Pick<Config, "authUrl">,
  name: string,
  value: string,
  maxAgeSeconds: number,
) {
  const attributes = [`${name}=${value}`, "Path=/", `Max-Age=${maxAgeSeconds}`, "HttpOnly"];
  if (_secure(config)) attributes.push("Secure");
  attributes.push("SameSite=Lax");
  return attributes.join("; ");
}

export function clearCookie(config: Pick<Config, "authUrl">, name: string): string {
  return setCookie(config, name, "", 0);
}

/** The first cookie of that name; our values are base64url, so no decoding is needed. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("Cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

function _secure(config: Pick<Config, "authUrl">): boolean {
  return config.authUrl.startsWith("https:");
}
