import type { Config } from "../config/config.ts";
import { cookieName, readCookie, setCookie } from "./cookies.ts";
import { constantTimeEqual, hmacToken, randomSecret } from "../secrets.ts";

const LIFETIME_SECONDS = 24 * 60 * 60;

export interface FormCsrf {
  /** The hidden-field token for a form, and a cookie to set when the browser had none. */
  issue(request: Request, purpose: string): Promise<{ token: string; setCookie: string | null }>;
  verify(request: Request, purpose: string, token: string): Promise<boolean>;
}

/**
 * CSRF for forms shown before sign-in (sign-up, sign-in, link confirmation): a random
 * HttpOnly SameSite cookie, and per form the HMAC of its purpose under that cookie. Another
 * site can neither read the cookie nor compute the field, so it cannot post for the browser
 * (which also stops it from signing a victim into the attacker's account).
 */
export function createFormCsrf(config: Pick<Config, "authUrl">): FormCsrf {
  const name = cookieName(config, "vestibule_csrf");
  return {
    async issue(request, purpose) {
      const existing = readCookie(request, name);
      const secret = existing ?? randomSecret();
      return {
        token: await hmacToken(secret, purpose),
        setCookie: existing ? null : setCookie(config, name, secret, LIFETIME_SECONDS),
      };
    },
    async verify(request, purpose, token) {
      const secret = readCookie(request, name);
      if (!secret || token === "") return false;
      return constantTimeEqual(token, await hmacToken(secret, purpose));
    },
  };
}
