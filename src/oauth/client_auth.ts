/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3): public
 * clients name themselves with `client_id`; confidential ones prove their secret with
 * HTTP Basic or in the body, never both.
 */
import { type ClientRecord, type Clients, secretMatches } from "./clients.ts";
import { OAuthError } from "./oauth_error.ts";

const BASIC_CHALLENGE = { "WWW-Authenticate": 'Basic realm="vestibule"' };

export async function authenticateClient(
  request: Request,
  fields: Readonly<Record<string, string>>,
  clients: Clients,
): Promise<ClientRecord> {
  const header = request.headers.get("Authorization");
  const basic = _basic(request);
  if (header !== null && basic === null) {
    throw new OAuthError(
      "invalid_client",
      "The Authorization header is not valid Basic credentials",
      401,
      BASIC_CHALLENGE,
    );
  }
  if (basic && fields.client_secret !== undefined) {
    throw new OAuthError(
      "invalid_request",
      "Use one client authentication method, not Basic and client_secret both",
    );
  }
  if (basic && fields.client_id !== undefined && fields.client_id !== basic.id) {
    throw new OAuthError(
      "invalid_client",
      "client_id differs from the Basic credentials",
      401,
      BASIC_CHALLENGE,
    );
  }
  const clientId = basic?.id ?? fields.client_id;
  if (clientId === undefined || clientId === "") {
    throw new OAuthError("invalid_client", "client_id is required", 401);
  }
  const found = await clients.lookup(clientId);
  if (!found.ok) {
    throw new OAuthError("invalid_client", found.description, 401, basic ? BASIC_CHALLENGE : {});
  }
  const client = found.client;
  // RFC 7591 §2: the registered token_endpoint_auth_method is binding; checked before the
  // secret, so a request in the wrong form learns nothing about the secret it carries.
  const registered = client.tokenEndpointAuthMethod;
  const used = basic
    ? "client_secret_basic"
    : fields.client_secret !== undefined
    ? "client_secret_post"
    : "none";
  // RFC 6749 §5.2: a Basic attempt gets the Basic challenge; so does a client registered for
  // Basic, the 401 naming the scheme it supports.
  const challenge = basic || registered === "client_secret_basic" ? BASIC_CHALLENGE : {};
  if (used !== registered) {
    throw new OAuthError(
      "invalid_client",
      `This client is registered for token_endpoint_auth_method "${registered}", not "${used}"`,
      401,
      challenge,
    );
  }
  if (registered === "none") return client;
  if (!await secretMatches(client, basic?.secret ?? fields.client_secret ?? "")) {
    throw new OAuthError("invalid_client", "Client authentication failed", 401, challenge);
  }
  return client;
}

function _basic(request: Request): { id: string; secret: string } | null {
  const header = request.headers.get("Authorization");
  const match = header?.match(/^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i);
  if (!match) return null;
  let decoded: string;
  try {
    decoded = new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(atob(match[1]!), (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon === -1) return null;
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before being joined.
    const unform = (s: string) => decodeURIComponent(s.replaceAll("+", " "));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}
