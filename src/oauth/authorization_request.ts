/**
 * Parses and validates an authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707,
 * RFC 9207). Until client_id and redirect_uri are validated, an error may not be sent to
 * the redirect URI (RFC 6749 §4.1.2.1): it is `fatal` and shown to the human instead.
 */
import type { Config } from "../config/config.ts";
import type { ClientRecord, Clients } from "./clients.ts";
import type { OAuthErrorCode } from "./oauth_error.ts";
import { redirectUriMatches } from "./redirect_uri.ts";
import { canonicalResource } from "./resource.ts";
import { DEFAULT_SCOPES, type ScopeCatalogue } from "./scopes.ts";

export interface AuthorizationRequest {
  readonly client: ClientRecord;
  readonly redirectUri: string;
  readonly state: string | null;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly nonce: string | null;
  readonly promptNone: boolean;
}

export type AuthorizationParse =
  | { kind: "ok"; request: AuthorizationRequest }
  | { kind: "fatal"; description: string }
  | {
    kind: "redirect";
    redirectUri: string;
    state: string | null;
    error: OAuthErrorCode;
    description: string;
  };

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PROMPTS = new Set(["none", "consent", "login", "select_account"]);

export async function parseAuthorizationRequest(
  params: URLSearchParams,
  deps: { config: Pick<Config, "apiUrl">; clients: Clients; scopes: ScopeCatalogue },
): Promise<AuthorizationParse> {
  const all = (name: string) => params.getAll(name);
  const clientIds = all("client_id");
  if (clientIds.length !== 1 || clientIds[0] === "") {
    return {
      kind: "fatal",
      description: clientIds.length > 1 ? "client_id is repeated" : "client_id is required",
    };
  }
  const found = await deps.clients.lookup(clientIds[0]!);
  if (!found.ok) return { kind: "fatal", description: found.description };
  const client = found.client;
  const redirectUris = all("redirect_uri");
  if (redirectUris.length !== 1) {
    return {
      kind: "fatal",
      description: redirectUris.length > 1
        ? "redirect_uri is repeated"
        : "redirect_uri is required",
    };
  }
  const redirectUri = redirectUris[0]!;
  if (!client.redirectUris.some((registered) => redirectUriMatches(registered, redirectUri))) {
    return { kind: "fatal", description: "redirect_uri is not registered for this client" };
  }

  // From here on, errors go back to the client.
  const states = all("state");
  const state = states.length === 1 ? states[0]! : null;
  const fail = (error: OAuthErrorCode, description: string): AuthorizationParse => ({
    kind: "redirect",
    redirectUri,
    state,
    error,
    description,
  });
  if (states.length > 1) return fail("invalid_request", "state is repeated");
  const resources = all("resource");
  if (resources.length > 1) return fail("invalid_target", "resource must be given at most once");
  for (const name of new Set(params.keys())) {
    if (name !== "resource" && all(name).length > 1) {
      return fail("invalid_request", `Parameter "${name}" is repeated`);
    }
  }
  const one = (name: string) => params.get(name);

  const responseType = one("response_type");
  if (responseType === null) return fail("invalid_request", "response_type is required");
  if (responseType !== "code") {
    return fail("unsupported_response_type", 'response_type must be "code"');
  }
  const challenge = one("code_challenge");
  const method = one("code_challenge_method");
  if (challenge === null) return fail("invalid_request", "code_challenge is required (PKCE, S256)");
  if (method !== "S256") {
    return fail(
      "invalid_request",
      method === null
        ? "code_challenge_method is required and must be S256"
        : `code_challenge_method ${JSON.stringify(method)} is not supported; use S256`,
    );
  }
  if (!CHALLENGE.test(challenge)) {
    return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier");
  }
  const resource = canonicalResource(one("resource"), deps.config);
  if (!resource.ok) return fail("invalid_target", resource.description);
  const scopeParam = one("scope");
  const scopes = scopeParam === null
    ? { ok: true as const, scopes: [] }
    : deps.scopes.parse(scopeParam);
  if (!scopes.ok) {
    return fail("invalid_scope", `scope ${JSON.stringify(scopes.unknown)} is not supported`);
  }
  const prompts = (one("prompt") ?? "").split(" ").filter((p) => p !== "");
  const unknownPrompt = prompts.find((p) => !PROMPTS.has(p));
  if (unknownPrompt !== undefined) {
    return fail("invalid_request", `prompt ${JSON.stringify(unknownPrompt)} is not supported`);
  }
  if (prompts.includes("none") && prompts.length > 1) {
    return fail("invalid_request", 'prompt "none" cannot be combined with other values');
  }
  const nonce = one("nonce");
  if (nonce !== null && (nonce.length > 512 || nonce === "")) {
    return fail("invalid_request", "nonce must be 1-512 characters");
  }
  if (state !== null && state.length > 2048) {
    return fail("invalid_request", "state must be at most 2048 characters");
  }
  return {
    kind: "ok",
    request: {
      client,
      redirectUri,
      state,
      codeChallenge: challenge,
      resource: resource.resource,
      scopes: scopes.scopes.length > 0 ? scopes.scopes : DEFAULT_SCOPES,
      nonce,
      promptNone: prompts.includes("none"),
    },
  };
}

/**
 * The redirect back to the client with `iss` (RFC 9207) and `state` echoed exactly, as
 * query parameters added to the registered URI's own query.
 */
export function authorizationRedirect(
  redirectUri: string,
  issuer: string,
  state: string | null,
  params: Readonly<Record<string, string>>,
  status: 302 | 303,
): Response {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.append(name, value);
  if (state !== null) url.searchParams.append("state", state);
  url.searchParams.append("iss", issuer);
  return new Response(null, {
    status,
    headers: {
      Location: url.href,
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
    },
  });
}
