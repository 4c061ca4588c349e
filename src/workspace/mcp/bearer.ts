/**
 * Bearer authentication of the workspace MCP endpoint (RFC 6750, RFC 9728 §5.1), done
 * before any JSON-RPC is read: the token from the Authorization header only, verified
 * in-process against the store's keys and grants, then the account's current membership
 * of the token's business and the `app.access` scope.
 */
import type { Accounts, Role } from "../../accounts/model.ts";
import { BoundedMap } from "../../bounded_map.ts";
import type { Config } from "../../config/config.ts";
import type { RateLimiter } from "../../http/rate_limiter.ts";
import type { TokenCheck } from "../../oauth/access_token.ts";
import { OAuthError } from "../../oauth/oauth_error.ts";

/** What a verified request carries into the tools. */
export interface WorkspaceAuth {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  /** The client's name as the human saw it at consent (the grant's record). */
  readonly clientName: string;
  /** The grant behind the token. */
  readonly grantId: string;
  /** Granted scopes in the token's order. */
  readonly scopes: readonly string[];
  readonly role: Role;
}

export type BearerOutcome =
  | { readonly ok: true; readonly auth: WorkspaceAuth }
  /** A 401 or 403, with its `WWW-Authenticate` challenge when consent can help. */
  | { readonly ok: false; readonly error: OAuthError }
  /** Too many tokens to verify from one client address. */
  | { readonly ok: false; readonly error: null; readonly retryAfterSeconds: number };

/** What verifying a token decides, the same for every request that sends it. */
type Verdict = Exclude<BearerOutcome, { readonly error: null }>;

export const BASE_SCOPE = "app.access";

// RFC 6750 §2.1: b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

export function resourceMetadataUrl(config: Pick<Config, "apiUrl">): string {
  return `${config.apiUrl}/.well-known/oauth-protected-resource`;
}

/** The WWW-Authenticate value; `error` only when a token was sent (RFC 6750 §3.1). */
export function bearerChallenge(
  config: Pick<Config, "apiUrl">,
  scope: string,
  error?: "invalid_token" | "insufficient_scope",
): string {
  const parts = [
    `resource_metadata="${resourceMetadataUrl(config)}"`,
    `scope="${scope}"`,
    ...(error ? [`error="${error}"`] : []),
  ];
  return `Bearer ${parts.join(", ")}`;
}

export interface BearerDeps {
  readonly config: Pick<Config, "apiUrl">;
  readonly accounts: Accounts;
  readonly verify: (jwt: string) => Promise<TokenCheck>;
  readonly now: () => number;
  /**
   * Per client address, spent by each request whose token is refused (401 or 403) and checked
   * before each verification (a token not accepted in the last second): bogus tokens cannot
   * make the server verify signatures without bound, while valid ones spend nothing, however
   * many agents share one address (an office, a NAT, an agent platform).
   */
  readonly verifyLimiter: RateLimiter;
}

/**
 * How long an accepted token's decision (grant active, membership, role) is reused. Two
 * store reads per request dominate the endpoint's cost; DESIGN.md asks that revocation and
 * lapsed membership take effect "within seconds", and this keeps it within one.
 */
export const DECISION_TTL_MS = 1_000;
const MAX_DECISIONS = 10_000;

export function createBearerAuth(
  deps: BearerDeps,
): (request: Request, clientAddress: string) => Promise<BearerOutcome> {
  const { config, accounts, verify, now, verifyLimiter } = deps;
  const decided = new BoundedMap<string, { auth: WorkspaceAuth; until: number }>(MAX_DECISIONS);
  const unauthorized = (description: string, sent: boolean): Verdict => ({
    ok: false,
    error: new OAuthError(sent ? "invalid_token" : "invalid_request", description, 401, {
      "WWW-Authenticate": bearerChallenge(config, BASE_SCOPE, sent ? "invalid_token" : undefined),
    }),
  });

  // One verification per token at a time: concurrent requests with it share the first's.
  const verifying = new Map<string, Promise<Verdict>>();
  const decide = async (jwt: string): Promise<Verdict> => {
    const at = now();
    const check = await verify(jwt);
    if (!check.ok) return unauthorized(check.description, true);
    const { claims } = check;
    const membership = await accounts.getMembership(claims.sub, claims.business);
    if (!membership) {
      // Consent cannot fix this, so no scope challenge.
      return {
        ok: false,
        error: new OAuthError(
          "access_denied",
          "The account is no longer a member of the token's business",
          403,
        ),
      };
    }
    const scopes = claims.scope.split(" ").filter((s) => s !== "");
    if (!scopes.includes(BASE_SCOPE)) {
      return {
        ok: false,
        error: new OAuthError(
          "insufficient_scope",
          `The workspace needs the ${BASE_SCOPE} scope`,
          403,
          { "WWW-Authenticate": bearerChallenge(config, BASE_SCOPE, "insufficient_scope") },
        ),
      };
    }
    const auth: WorkspaceAuth = {
      accountId: claims.sub,
      businessId: claims.business,
      clientId: claims.client_id,
      clientName: check.clientName,
      grantId: claims.gid,
      scopes,
      role: membership.role,
    };
    decided.set(jwt, { auth, until: Math.min(at + DECISION_TTL_MS, claims.exp * 1000) });
    return { ok: true, auth };
  };

  return async (request, clientAddress) => {
    // Only a URL with a query can carry one: most requests skip parsing the URL.
    const url = request.url;
    if (url.includes("?") && new URL(url).searchParams.has("access_token")) {
      return unauthorized(
        "Access tokens are accepted only in the Authorization header, never in the query string",
        true,
      );
    }
    const header = request.headers.get("Authorization");
    if (header === null || !/^bearer(\s|$)/i.test(header)) {
      return unauthorized(
        "This endpoint needs an OAuth access token: send Authorization: Bearer <token>",
        false,
      );
    }
    const match = BEARER.exec(header);
    if (!match) return unauthorized("The Authorization header does not carry a bearer token", true);
    const jwt = match[1]!;
    const remembered = decided.get(jwt);
    if (remembered && remembered.until > now()) return { ok: true, auth: remembered.auth };
    let verdict = verifying.get(jwt);
    if (verdict === undefined) {
      // Only failures spend the address's budget (below), but an empty one refuses before
      // anything is verified: bogus tokens cannot make the server verify without bound.
      const allowed = verifyLimiter.check(clientAddress);
      if (!allowed.allowed) {
        return { ok: false, error: null, retryAfterSeconds: allowed.retryAfterSeconds };
      }
      verdict = decide(jwt).finally(() => verifying.delete(jwt));
      verifying.set(jwt, verdict);
    }
    const outcome = await verdict;
    if (!outcome.ok) verifyLimiter.charge(clientAddress);
    return outcome;
  };
}
