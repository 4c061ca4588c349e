/**
 * A consent that waits while the person connects their own account of the per-person upstreams
 * they just granted (`upstream.<name>`: "connect your <upstream> account", then back to the
 * agent). The decision is kept here and the code is issued only when they come back, so the
 * agent's 60-second code cannot expire while they sign in upstream.
 */
import type { Store } from "../store/store.ts";
import { randomSecret } from "../secrets.ts";
import { authorizationRedirect } from "./authorization_request.ts";
import { type CodeBinding, issueCode } from "./codes.ts";

/** What the consent needs of the gateway's per-person upstreams (gateway/connect). */
export interface UpstreamSignIns {
  /** The per-person upstreams `scopes` open that the account has not connected for the business. */
  missing(accountId: string, businessId: string, scopes: readonly string[]): Promise<string[]>;
  /** The page that connects `upstream`, then resumes the consent `held`. */
  connectPath(upstream: string, businessId: string, held: string): string;
}

export interface HeldConsent {
  readonly binding: CodeBinding;
  readonly redirectUri: string;
  readonly state: string | null;
  readonly sessionId: string;
}

/** As long as a person may take to sign in upstream (and a second upstream after it). */
const HELD_LIFETIME_MS = 30 * 60 * 1000;

const heldKey = (id: string) => ["oauth", "held_consent", id];

/** Keeps an allowed consent; returns the id the connect pages carry. */
export async function holdConsent(store: Store, held: HeldConsent): Promise<string> {
  const id = randomSecret();
  await store.set(heldKey(id), held, { expireIn: HELD_LIFETIME_MS });
  return id;
}

/** The held consent, when it is this session's. */
export async function heldConsent(
  store: Store,
  id: string,
  sessionId: string,
): Promise<HeldConsent | null> {
  const entry = await store.get<HeldConsent>(heldKey(id));
  return entry !== null && entry.value.sessionId === sessionId ? entry.value : null;
}

/**
 * Issues the code (once: the record is consumed) and answers with the redirect to the agent;
 * null when the consent is unknown, expired, already resumed or another session's.
 */
export async function resumeConsent(
  store: Store,
  issuer: string,
  id: string,
  sessionId: string,
): Promise<Response | null> {
  const key = heldKey(id);
  const entry = await store.get<HeldConsent>(key);
  if (entry === null || entry.value.sessionId !== sessionId) return null;
  if (!await store.commit([{ key, version: entry.version }], [{ type: "delete", key }])) {
    return null;
  }
  const { binding, redirectUri, state } = entry.value;
  const code = await issueCode(store, binding);
  return authorizationRedirect(redirectUri, issuer, state, { code }, 303);
}
