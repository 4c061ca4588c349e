// A person's sign-in at an upstream's authorization server, which makes their connection: begun
// (discovery and our client, PKCE, a state that binds the answer to their session, kept sealed
// until they come back) and completed on the callback (the answer checked, the code exchanged,
// the tokens sealed and stored with their audit entry and event; the pair they replace revoked).
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { EventOutbox } from "../../events/event_outbox.ts";
import { base64url, hashSecret, randomSecret, sha256 } from "../../secrets.ts";
import type { Key, Store } from "../../store/store.ts";
import type { AuditLog } from "../../workspace/domain/audit.ts";
import type { Caller } from "../upstream_set.ts";
import {
  connectionAudit,
  connectionKey,
  type ConnectionRecord,
  type ConnectionStore,
  type StoredClient,
} from "./connection_store.ts";
import type { AuthorizationServer } from "./discovery.ts";
import {
  authorizationUrl,
  checkAuthorizationResponse,
  exchangeCode,
  type TokenSet,
} from "./oauth_client.ts";
import type { UpstreamClients } from "./upstream_clients.ts";
import { type Sealed, type TokenVault, VaultError } from "./vault.ts";

/** Where the person goes once connected: their account page, or back to an agent's consent. */
export type Continuation =
  | { readonly kind: "account" }
  | { readonly kind: "consent"; readonly id: string };

export interface SignInDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly vault: TokenVault;
  readonly audit: AuditLog;
  readonly events: EventOutbox;
  /** The upstreams that need each person's sign-in, by name (the set may grow: discovered). */
  readonly upstream: (name: string) => UpstreamConfig | undefined;
  readonly fetch?: typeof fetch;
}

/** What the flow shares with the rest of the connections. */
export interface SignInContext {
  readonly deps: SignInDeps;
  readonly records: ConnectionStore;
  readonly clients: UpstreamClients;
  /** Where the upstream's authorization server sends the person back. */
  readonly redirectUri: string;
}

export interface SignInStart {
  readonly upstream: UpstreamConfig;
  readonly caller: Caller;
  readonly sessionId: string;
  readonly then: Continuation;
}

export type SignInOutcome =
  | { ok: true; upstream: UpstreamConfig; caller: Caller; then: Continuation }
  | { ok: false; problem: string; then: Continuation | null };

/** How long a person has to finish signing in upstream. */
const AUTHORIZATION_LIFETIME_MS = 10 * 60 * 1000;

/** A sign-in under way, keyed by the hash of its state. */
interface PendingAuthorization {
  readonly upstream: string;
  readonly businessId: string;
  readonly accountId: string;
  readonly sessionId: string;
  readonly verifier: Sealed;
  readonly resource: string;
  readonly server: AuthorizationServer;
  readonly client: StoredClient;
  readonly scopes: readonly string[];
  readonly then: Continuation;
}

const pendingKey = (stateHash: string): Key => ["upstream_authorization", stateHash];

/**
 * Starts connecting: the URL of the upstream's authorization endpoint to send the person to,
 * with the state that binds the answer to this session.
 */
export async function beginSignIn(
  ctx: SignInContext,
  { upstream, caller, sessionId, then }: SignInStart,
): Promise<{ ok: true; url: string } | { ok: false; problem: string }> {
  const { deps, records, clients, redirectUri } = ctx;
  if (upstream.auth === null) {
    return { ok: false, problem: `${upstream.title} needs no sign-in of its own` };
  }
  const found = await clients.discover(upstream);
  if (!found.ok) return { ok: false, problem: found.problem };
  const { server, resource } = found.value;
  const client = await clients.clientFor(upstream, upstream.auth, server);
  if (!client.ok) return client;
  // MCP step-up: what the connection asked for and what the upstream wanted since, kept.
  const previous = (await records.read(upstream.name, caller))?.value;
  const scopes = [
    ...new Set([
      ...upstream.auth.scopes ?? found.value.scopes,
      ...previous?.scopes ?? [],
      ...previous?.wanted ?? [],
    ]),
  ];
  const state = randomSecret();
  const verifier = randomSecret(48);
  const challenge = base64url(await sha256(verifier));
  const pending: PendingAuthorization = {
    upstream: upstream.name,
    businessId: caller.businessId,
    accountId: caller.accountId,
    sessionId,
    verifier: await deps.vault.seal(`verifier:${upstream.name}`, verifier),
    resource,
    server,
    client: client.client,
    scopes,
    then,
  };
  await deps.store.set(pendingKey(await hashSecret(state)), pending, {
    expireIn: AUTHORIZATION_LIFETIME_MS,
  });
  return {
    ok: true,
    url: authorizationUrl(server, await records.credentials(upstream.name, client.client), {
      redirectUri,
      state,
      codeChallenge: challenge,
      resource,
      scopes,
    }),
  };
}

/** The callback: checks the answer (once, for its own session), exchanges the code. */
export async function completeSignIn(
  ctx: SignInContext,
  params: URLSearchParams,
  session: { readonly id: string; readonly accountId: string },
): Promise<SignInOutcome> {
  const { deps, records, redirectUri } = ctx;
  const state = params.get("state") ?? "";
  const key = pendingKey(await hashSecret(state));
  const entry = state === "" ? null : await deps.store.get<PendingAuthorization>(key);
  if (entry === null) {
    return {
      ok: false,
      problem: "This sign-in answer is unknown or expired: start connecting again",
      then: null,
    };
  }
  const pending = entry.value;
  // Single use, whatever happens next; and only for the session that started it.
  if (!await deps.store.commit([{ key, version: entry.version }], [{ type: "delete", key }])) {
    return { ok: false, problem: "This sign-in answer was already used", then: null };
  }
  if (pending.sessionId !== session.id || pending.accountId !== session.accountId) {
    return {
      ok: false,
      problem: "This sign-in was started in another session: start connecting again",
      then: null,
    };
  }
  const upstream = deps.upstream(pending.upstream);
  const then = pending.then;
  if (upstream === undefined || upstream.auth === null) {
    return { ok: false, problem: `${pending.upstream} is no longer configured`, then };
  }
  const answer = checkAuthorizationResponse(pending.server, params, state);
  if (!answer.ok) return { ok: false, problem: answer.problem, then };
  let client, codeVerifier;
  try {
    client = await records.credentials(upstream.name, pending.client);
    codeVerifier = await deps.vault.open(`verifier:${upstream.name}`, pending.verifier);
  } catch (error) {
    // The key file changed while the person was signing in upstream.
    if (!(error instanceof VaultError)) throw error;
    return { ok: false, problem: "Vestibule's key changed meanwhile: connect again", then };
  }
  const outcome = await exchangeCode(pending.server, client, {
    code: answer.code,
    codeVerifier,
    redirectUri,
    resource: pending.resource,
  }, _http(deps));
  if (!outcome.ok) {
    return {
      ok: false,
      problem: `${upstream.title} did not complete the sign-in: ${outcome.problem}`,
      then,
    };
  }
  const caller = { businessId: pending.businessId, accountId: pending.accountId };
  const stored = await _storeConnection(ctx, upstream, caller, pending, outcome.tokens);
  if (stored) return { ok: true, upstream, caller, then };
  return { ok: false, problem: "The connection changed meanwhile: try again", then };
}

/**
 * The connection's record with its new tokens sealed, its audit entry and its event, in one
 * commit; the tokens it replaces revoked. False when it kept changing meanwhile.
 */
async function _storeConnection(
  { deps, records }: SignInContext,
  upstream: UpstreamConfig,
  caller: Caller,
  pending: PendingAuthorization,
  tokens: TokenSet,
): Promise<boolean> {
  const connection = connectionKey(upstream.name, caller);
  const previous = await deps.store.get<ConnectionRecord>(connection);
  const at = deps.now();
  const record: ConnectionRecord = {
    status: "connected",
    resource: pending.resource,
    server: pending.server,
    client: pending.client,
    tokens: await records.sealPair(connection, {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
    }),
    expiresAt: tokens.expiresAt,
    obtainedAt: at,
    connectedAt: at,
    refreshedAt: null,
    lease: null,
    problem: null,
    scopes: pending.scopes ?? [],
    wanted: [],
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await deps.store.get<ConnectionRecord>(connection);
    const events = await deps.events.record(caller.businessId, [{
      type: "upstream.connected",
      data: {
        businessId: caller.businessId,
        upstream: upstream.name,
        accountId: caller.accountId,
      },
    }]);
    const committed = await deps.store.commit(
      [{ key: connection, version: current?.version ?? null }, ...events.checks],
      [
        { type: "set", key: connection, value: record },
        connectionAudit(deps.audit, caller, {
          actor: "human",
          action: "upstream_connected",
          summary: `${
            previous === null ? "Connected" : "Reconnected"
          } their ${upstream.title} account`,
        }),
        ...events.mutations,
      ],
    );
    if (committed) {
      deps.events.dispatch();
      // The tokens it replaces are revoked: a reconnect leaves no old pair alive upstream.
      if (previous !== null) void records.revoke(upstream.name, connection, previous.value);
      return true;
    }
  }
  return false;
}

function _http(deps: SignInDeps) {
  return { ...(deps.fetch ? { fetch: deps.fetch } : {}), now: deps.now };
}
