/**
 * The shell of the endpoints a client calls with its credentials (token, revocation): two
 * rate limits, the form, client authentication, and the OAuth error boundary.
 *
 * A client's budget (`token`, per client_id) is spent only by requests that proved to be the
 * client's own: a confidential client's by its secret, a public client's once its grant checks
 * out (the endpoint calls `admit`). Any other request spends its address's failure budget
 * (`token-failure`), which is checked before any work. A client_id is public, so a budget it
 * alone could spend would let anyone lock the client out.
 */
import type { Handler } from "../http/handler.ts";
import type { RateLimiter } from "../http/rate_limiter.ts";
import type { SharedRateLimiter } from "../http/shared_rate_limiter.ts";
import { authenticateClient } from "./client_auth.ts";
import type { ClientRecord, Clients } from "./clients.ts";
import { readOAuthForm } from "./form_body.ts";
import { OAuthError, withOAuthErrors } from "./oauth_error.ts";

export interface TokenBudgets {
  /** `token`, keyed by client_id; shared by every replica. */
  readonly client: SharedRateLimiter;
  /** `token-failure`, keyed by client address. */
  readonly failure: RateLimiter;
}

export interface ClientRequest {
  readonly client: ClientRecord;
  readonly fields: Readonly<Record<string, string>>;
  /**
   * Marks the request as the client's own, spending one of the client's budget (once); over
   * it, throws a 429. Called before anything is committed, so a refused request changes nothing.
   */
  readonly admit: () => Promise<void>;
}

export function createClientEndpoint(
  deps: { readonly clients: Clients; readonly budgets: TokenBudgets },
  handle: (request: ClientRequest) => Promise<Response>,
): Handler {
  const { clients, budgets } = deps;
  return withOAuthErrors(async (request, context) => {
    const address = context.clientAddress;
    const open = budgets.failure.check(address);
    if (!open.allowed) {
      await request.body?.cancel();
      throw _tooMany("Too many failed requests from this address", open.retryAfterSeconds);
    }
    let admitted = false;
    try {
      const fields = await readOAuthForm(request);
      const client = await authenticateClient(request, fields, clients);
      const admit = async () => {
        if (admitted) return;
        admitted = true;
        const decision = await budgets.client.take(client.clientId);
        if (!decision.allowed) {
          throw _tooMany("Too many requests for this client", decision.retryAfterSeconds);
        }
      };
      if (client.tokenEndpointAuthMethod !== "none") await admit();
      return await handle({ client, fields, admit });
    } finally {
      // Includes RFC 7009's 200 for an unknown token: it proved nothing either.
      if (!admitted) budgets.failure.charge(address);
    }
  });
}

function _tooMany(what: string, seconds: number): OAuthError {
  return new OAuthError(
    "temporarily_unavailable",
    `${what}; retry after ${seconds} s`,
    429,
    { "Retry-After": String(seconds) },
  );
}
