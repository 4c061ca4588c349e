import type { Config } from "../config/config.ts";
import type { Store } from "../store/store.ts";
import { clearCookie, cookieName, readCookie, setCookie } from "./cookies.ts";
import type { Accounts, Session, Sessions } from "./model.ts";
import { hasControlCharacters } from "./schemas.ts";
import { constantTimeEqual, hashSecret, hmacToken, randomSecret } from "../secrets.ts";

/** How long a browser stays signed in. */
export const SESSION_LIFETIME_MS = 14 * 24 * 60 * 60 * 1000;

interface SessionRecord {
  readonly accountId: string;
  /** Keys the CSRF tokens of this session's forms; dies with the session. */
  readonly csrfSecret: string;
  readonly createdAt: number;
}

const _key = (id: string) => ["accounts", "session", id];

/** Signs an account out everywhere (its deletion); returns how many sessions ended. */
export async function deleteSessionsOf(store: Store, accountId: string): Promise<number> {
  let count = 0;
  for await (const entry of store.list<SessionRecord>(["accounts", "session"])) {
    if (entry.value.accountId !== accountId) continue;
    await store.delete(entry.key);
    count++;
  }
  return count;
}

/**
 * Browser sessions. The cookie carries a random id; the store keys the record by its
 * SHA-256, which is also the public `Session.id`, so neither logs nor the store can
 * replay a cookie.
 */
export function createSessions(
  deps: {
    config: Pick<Config, "authUrl">;
    store: Store;
    now: () => number;
    accounts: Accounts;
  },
): Sessions {
  const { config, store, now, accounts } = deps;
  const name = cookieName(config, "vestibule_session");

  const record = async (session: Session) =>
    (await store.get<SessionRecord>(_key(session.id)))?.value ?? null;

  return {
    async current(request) {
      const raw = readCookie(request, name);
      if (!raw) return null;
      const id = await hashSecret(raw);
      const entry = await store.get<SessionRecord>(_key(id));
      if (!entry) return null;
      const account = await accounts.getAccount(entry.value.accountId);
      return account ? { id, account } : null;
    },

    async csrfToken(session, purpose) {
      const found = await record(session);
      if (!found) return "";
      return await hmacToken(found.csrfSecret, `${session.id}\n${purpose}`);
    },

    async verifyCsrf(session, purpose, token) {
      const found = await record(session);
      if (!found || token === "") return false;
      return constantTimeEqual(
        token,
        await hmacToken(found.csrfSecret, `${session.id}\n${purpose}`),
      );
    },

    signInUrl(returnTo) {
      return `${config.authUrl}/sign-in?return_to=${encodeURIComponent(returnTo)}`;
    },

    async start(accountId) {
      const raw = randomSecret();
      const value: SessionRecord = { accountId, csrfSecret: randomSecret(), createdAt: now() };
      await store.set(_key(await hashSecret(raw)), value, { expireIn: SESSION_LIFETIME_MS });
      return setCookie(config, name, raw, SESSION_LIFETIME_MS / 1000);
    },

    async end(session) {
      await store.delete(_key(session.id));
      return clearCookie(config, name);
    },
  };
}

/**
 * Where to go after signing in: only a path on this origin (one leading `/`, no `//` or
 * `/\` that a browser would read as another host); anything else becomes `/account`.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || value.length > 4096) return "/account";
  if (!/^\/(?![/\\])/.test(value) || value.includes("\\") || hasControlCharacters(value)) {
    return "/account";
  }
  return value;
}
