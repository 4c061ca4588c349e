/**
 * Vestibule as an OAuth client of an upstream's authorization server: dynamic registration
 * (RFC 7591), the authorization request (PKCE S256, RFC 8707 `resource`), the check of its
 * response (RFC 9207), code exchange and refresh (RFC 6749 §4.1.3, §6), revocation (RFC 7009).
 * Pure functions of a discovered server, injected fetch and clock. A problem never carries a
 * token, code or secret: the upstream's own error words are reduced to its error code.
 */
import * as v from "valibot";
import { isLoopbackHost } from "../../config/values.ts";
import { constantTimeEqual } from "../../secrets.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { fetchJson, type JsonAnswer } from "./fetch_json.ts";

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string | null;
  readonly authMethod: AuthMethod;
}

type AuthMethod = "none" | "client_secret_basic" | "client_secret_post";

export interface TokenSet {
  readonly accessToken: string;
  readonly refreshToken: string | null;
  /** Epoch ms, from `expires_in` and the clock at the answer; null when the server is silent. */
  readonly expiresAt: number | null;
  readonly scope: string | null;
}

export type TokenOutcome = { ok: true; tokens: TokenSet } | {
  ok: false;
  /** invalid_grant, invalid_client, unauthorized_client: the person must connect again. */
  permanent: boolean;
  problem: string;
};

export interface OAuthClientDeps {
  readonly fetch?: typeof fetch;
  readonly now: () => number;
}

export interface RegistrationRequest {
  readonly redirectUri: string;
  readonly clientName: string;
  readonly clientUri?: string;
  readonly scope?: string;
}

const CALL_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;
/**
 * Our preference among what the server offers: a confidential client first. Vestibule is a
 * server that can keep a secret (sealed like the tokens), and servers rotate a public client's
 * refresh token on every use (OAuth 2.1 §4.3.1), so a process killed mid-refresh would lose
 * the only pair that works; a confidential client's refresh token usually stays.
 */
const AUTH_METHODS: readonly AuthMethod[] = ["client_secret_basic", "client_secret_post", "none"];
const PERMANENT_ERRORS: Readonly<Record<string, string>> = {
  invalid_grant: "the grant is no longer valid (invalid_grant)",
  invalid_client: "it does not accept Vestibule's client (invalid_client)",
  unauthorized_client: "Vestibule's client may not use this grant (unauthorized_client)",
};

export async function registerClient(
  server: AuthorizationServer,
  metadata: RegistrationRequest,
  deps: OAuthClientDeps,
): Promise<{ ok: true; client: ClientCredentials } | { ok: false; problem: string }> {
  if (server.registrationEndpoint === null) {
    return {
      ok: false,
      problem: `The authorization server ${server.issuer} offers no client registration`,
    };
  }
  const where = `The registration endpoint at ${new URL(server.registrationEndpoint).host}`;
  const wanted = AUTH_METHODS.find((m) => server.tokenEndpointAuthMethods.includes(m));
  if (wanted === undefined) {
    return {
      ok: false,
      problem: `The authorization server ${server.issuer} offers no client authentication ` +
        `Vestibule supports (none, client_secret_basic, client_secret_post)`,
    };
  }
  const answer = await fetchJson(deps.fetch ?? fetch, server.registrationEndpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [metadata.redirectUri],
      client_name: metadata.clientName,
      ...(metadata.clientUri === undefined ? {} : { client_uri: metadata.clientUri }),
      ...(metadata.scope === undefined ? {} : { scope: metadata.scope }),
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: wanted,
      // MCP client registration: OpenID servers judge redirect URIs by the application type.
      application_type: isLoopbackHost(new URL(metadata.redirectUri).hostname) ? "native" : "web",
    }),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  }, MAX_ANSWER_BYTES);
  if (!answer.ok) return { ok: false, problem: `${where} ${answer.problem}` };
  if (answer.status !== 201 && answer.status !== 200) {
    return { ok: false, problem: `${where} ${_refusal(answer, "refused the registration")}` };
  }
  const parsed = v.safeParse(RegistrationSchema, answer.body);
  if (!parsed.success) {
    return { ok: false, problem: `${where} answered without a usable client_id` };
  }
  // RFC 7591 §3.2.1: the server may register another method than the one asked for.
  const method = parsed.output.token_endpoint_auth_method ?? wanted;
  if (!AUTH_METHODS.includes(method as AuthMethod)) {
    return { ok: false, problem: `${where} registered the unsupported method ${_code(method)}` };
  }
  const secret = parsed.output.client_secret ?? null;
  if (method !== "none" && secret === null) {
    return { ok: false, problem: `${where} registered ${method} but gave no client secret` };
  }
  return {
    ok: true,
    client: {
      clientId: parsed.output.client_id,
      clientSecret: method === "none" ? null : secret,
      authMethod: method as AuthMethod,
    },
  };
}

/** The URL that sends a person to sign in (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2). */
export function authorizationUrl(
  server: AuthorizationServer,
  client: ClientCredentials,
  p: {
    readonly redirectUri: string;
    readonly state: string;
    readonly codeChallenge: string;
    readonly resource: string;
    readonly scopes: readonly string[];
  },
): string {
  // RFC 6749 §3.1: the endpoint's own query is kept.
  const url = new URL(server.authorizationEndpoint);
  const query = url.searchParams;
  query.set("response_type", "code");
  query.set("client_id", client.clientId);
  query.set("redirect_uri", p.redirectUri);
  if (p.scopes.length > 0) query.set("scope", p.scopes.join(" "));
  query.set("state", p.state);
  query.set("code_challenge", p.codeChallenge);
  query.set("code_challenge_method", "S256");
  query.set("resource", p.resource);
  return url.href;
}

/**
 * The code of the authorization response at our redirect URI, or why it is not to be used.
 * MCP authorization response validation (RFC 9207 §2.4): a present `iss` must equal the
 * recorded issuer byte for byte, an absent one is refused when the server promised it, and a
 * response that fails either check is not acted on, its `error` not shown.
 */
export function checkAuthorizationResponse(
  server: AuthorizationServer,
  params: URLSearchParams,
  expectedState: string,
): { ok: true; code: string } | { ok: false; problem: string } {
  const host = new URL(server.issuer).host;
  const refuse = (problem: string) => ({ ok: false, problem }) as const;
  // RFC 6749 §3.1: a parameter sent twice makes the response ambiguous.
  for (const name of ["state", "iss", "code", "error"]) {
    if (params.getAll(name).length > 1) return refuse(`The sign-in response repeats "${name}"`);
  }
  const state = params.get("state");
  if (state === null || !constantTimeEqual(state, expectedState)) {
    return refuse("The sign-in response does not belong to this sign-in (its state differs)");
  }
  const iss = params.get("iss");
  if (iss !== null && iss !== server.issuer) {
    return refuse(`The sign-in response did not come from ${server.issuer}`);
  }
  if (iss === null && server.issParameterSupported) {
    return refuse(`The sign-in response lacks the "iss" that ${server.issuer} promises`);
  }
  const error = params.get("error");
  if (error !== null) return refuse(_authorizationError(host, error));
  const code = params.get("code");
  if (code === null || code === "") return refuse(`The sign-in response of ${host} has no code`);
  return { ok: true, code };
}

export function exchangeCode(
  server: AuthorizationServer,
  client: ClientCredentials,
  p: {
    readonly code: string;
    readonly codeVerifier: string;
    readonly redirectUri: string;
    readonly resource: string;
  },
  deps: OAuthClientDeps,
): Promise<TokenOutcome> {
  return _tokenRequest(
    server,
    client,
    {
      grant_type: "authorization_code",
      code: p.code,
      redirect_uri: p.redirectUri,
      code_verifier: p.codeVerifier,
      resource: p.resource,
    },
    null,
    deps,
  );
}

/** RFC 6749 §6; the old refresh token is kept when the server sends none. */
export function refreshTokens(
  server: AuthorizationServer,
  client: ClientCredentials,
  p: { readonly refreshToken: string; readonly resource: string },
  deps: OAuthClientDeps,
): Promise<TokenOutcome> {
  return _tokenRequest(
    server,
    client,
    {
      grant_type: "refresh_token",
      refresh_token: p.refreshToken,
      resource: p.resource,
    },
    p.refreshToken,
    deps,
  );
}

/** RFC 7009: true when the server confirmed; false without an endpoint, on refusal or outage. */
export async function revokeToken(
  server: AuthorizationServer,
  client: ClientCredentials,
  p: { readonly token: string; readonly hint: "refresh_token" | "access_token" },
  deps: OAuthClientDeps,
): Promise<boolean> {
  if (server.revocationEndpoint === null) return false;
  const request = _authenticated(client, { token: p.token, token_type_hint: p.hint });
  try {
    const response = await (deps.fetch ?? fetch)(server.revocationEndpoint, {
      method: "POST",
      ...request,
      redirect: "manual",
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    return response.status === 200;
  } catch {
    return false;
  }
}

async function _tokenRequest(
  server: AuthorizationServer,
  client: ClientCredentials,
  params: Record<string, string>,
  previousRefreshToken: string | null,
  deps: OAuthClientDeps,
): Promise<TokenOutcome> {
  const where = `The token endpoint at ${new URL(server.tokenEndpoint).host}`;
  const answer = await fetchJson(deps.fetch ?? fetch, server.tokenEndpoint, {
    method: "POST",
    ..._authenticated(client, params),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  }, MAX_ANSWER_BYTES);
  if (answer.ok && answer.status === 200) {
    const parsed = v.safeParse(TokenResponseSchema, answer.body);
    if (!parsed.success) {
      // The field only: its value may be a token.
      const field = v.getDotPath(parsed.issues[0]);
      const which = field === null ? "" : ` ("${field}" is missing or malformed)`;
      return {
        ok: false,
        permanent: false,
        problem: `${where} answered no token response${which}`,
      };
    }
    const t = parsed.output;
    // RFC 6749 §7.1: we only know how to use Bearer tokens (RFC 6750).
    if (t.token_type.toLowerCase() !== "bearer") {
      return {
        ok: false,
        permanent: false,
        problem: `${where} issued a ${_code(t.token_type)} token, not a Bearer token`,
      };
    }
    return {
      ok: true,
      tokens: {
        accessToken: t.access_token,
        refreshToken: t.refresh_token ?? previousRefreshToken,
        expiresAt: t.expires_in === undefined ? null : deps.now() + t.expires_in * 1000,
        scope: t.scope ?? null,
      },
    };
  }
  const error = answer.ok ? v.safeParse(ErrorSchema, answer.body) : null;
  if (error?.success && (answer.status === 400 || answer.status === 401)) {
    const code = error.output.error;
    const words = PERMANENT_ERRORS[code];
    return {
      ok: false,
      permanent: words !== undefined,
      problem: `${where} refused: ${words ?? `it answered ${_code(code)}`}`,
    };
  }
  // Network errors, 5xx, 429 and answers that are no OAuth error: worth another try later.
  return { ok: false, permanent: false, problem: `${where} ${_refusal(answer, "refused")}` };
}

/**
 * A form body with the client's authentication (RFC 6749 §2.3.1): the secret in a Basic
 * header, form-encoded before base64, or in the body, or only the client_id for a public
 * client.
 */
function _authenticated(
  client: ClientCredentials,
  params: Record<string, string>,
): { headers: Headers; body: URLSearchParams } {
  const headers = new Headers({ "Content-Type": "application/x-www-form-urlencoded" });
  const body = new URLSearchParams(params);
  if (client.authMethod === "client_secret_basic") {
    const encode = (s: string) => new URLSearchParams({ s }).toString().slice(2);
    const pair = `${encode(client.clientId)}:${encode(client.clientSecret ?? "")}`;
    headers.set("Authorization", `Basic ${btoa(pair)}`);
  } else {
    body.set("client_id", client.clientId);
    if (client.authMethod === "client_secret_post") {
      body.set("client_secret", client.clientSecret ?? "");
    }
  }
  return { headers, body };
}

/** How a failed answer reads after "The … endpoint at host". */
function _refusal(answer: JsonAnswer, verb: string): string {
  if (!answer.ok) return answer.problem;
  const error = v.safeParse(ErrorSchema, answer.body);
  return error.success
    ? `${verb} with ${_code(error.output.error)} (status ${answer.status})`
    : `answered ${answer.status}`;
}

function _authorizationError(host: string, error: string): string {
  switch (error) {
    case "access_denied":
      return `The sign-in at ${host} was declined`;
    case "temporarily_unavailable":
    case "server_error":
      return `${host} could not complete the sign-in just now; try again later`;
    case "invalid_scope":
      return `${host} does not grant the permissions Vestibule asked for`;
    default:
      return `${host} refused the sign-in (${_code(error)})`;
  }
}

/** An error code as the upstream sent it, if it looks like one: nothing else is repeated. */
function _code(text: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(text) ? text : "an unreadable error";
}

const ErrorSchema = v.object({ error: v.string() });

const RegistrationSchema = v.looseObject({
  client_id: v.pipe(v.string(), v.minLength(1)),
  client_secret: v.optional(v.string()),
  token_endpoint_auth_method: v.optional(v.string()),
});

const TokenResponseSchema = v.looseObject({
  access_token: v.pipe(v.string(), v.nonEmpty()),
  token_type: v.string(),
  // Some servers send the number as a string.
  expires_in: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.digits(), v.transform(Number))]),
      v.number(),
      v.minValue(0),
    ),
  ),
  refresh_token: v.optional(v.string()),
  scope: v.optional(v.string()),
});
