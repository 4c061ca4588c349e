// Shared steps of the OAuth black-box tests: a server with an outbox and a manual clock,
// a signed-in browser, registration, the consent dance, and token requests.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createAccessTokenVerifier, type TokenCheck } from "../../../src/oauth/access_token.ts";
import { createSigningKeys } from "../../../src/oauth/signing_keys.ts";
import type { Store } from "../../../src/store/store.ts";
import { manualClock } from "../../store/store_contract.ts";
import {
  Browser,
  hiddenField,
  signInThroughForms,
  signUpThroughForms,
  tempOutbox,
} from "./accounts_browser.ts";
import { startTestServer, type TestServer } from "./harness.ts";
import { INITIALIZE, mcpPost } from "./mcp_helpers.ts";

export interface OAuthFixture {
  readonly server: TestServer;
  readonly auth: string;
  readonly issuer: string;
  readonly outbox: Awaited<ReturnType<typeof tempOutbox>>;
  readonly clock: ReturnType<typeof manualClock>;
  /** The resource server's own verifier, on the fixture's clock. */
  readonly verify: (jwt: string) => Promise<TokenCheck>;
  close(): Promise<void>;
}

export async function oauthFixture(
  env: Record<string, string> = {},
  options: {
    readonly store?: Store;
    /** As TestServerOptions.dataUrl: a store file or database the server opens itself. */
    readonly dataUrl?: string;
    readonly clock?: ReturnType<typeof manualClock>;
  } = {},
): Promise<OAuthFixture> {
  const outbox = await tempOutbox();
  const clock = options.clock ?? manualClock(Date.now());
  const server = await startTestServer(
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off", ...env },
    {
      now: clock.now,
      ...(options.store ? { store: options.store } : {}),
      ...(options.dataUrl ? { dataUrl: options.dataUrl } : {}),
    },
  );
  return {
    server,
    auth: server.authUrl,
    issuer: `${server.authUrl}/api/auth`,
    outbox,
    clock,
    verify: createAccessTokenVerifier({
      keys: createSigningKeys({ store: server.store, now: clock.now }),
      store: server.store,
      now: clock.now,
      issuer: `${server.authUrl}/api/auth`,
      audience: server.apiUrl,
    }),
    close: () => server.close(),
  };
}

/** What the journey helpers need of a server: its origins and its outbox (no clock, no store). */
export type OAuthTarget = Pick<OAuthFixture, "auth" | "outbox"> & {
  readonly server: Pick<TestServer, "baseUrl" | "authUrl" | "apiUrl">;
};

/** A state no client would pick but every client may send: it must come back unchanged. */
export const AWKWARD_STATE = "a b+c/d?e=f&g=%20ü😀";

/** A browser signed up (and so signed in) as `email`, owning `business`. */
export async function ownerBrowser(
  fx: Pick<OAuthTarget, "auth" | "outbox">,
  email: string,
  ...businesses: string[]
): Promise<Browser> {
  const browser = new Browser();
  for (const business of businesses.length > 0 ? businesses : ["Acme Bakery"]) {
    await signUpThroughForms(browser, fx.auth, fx.outbox, email, business);
  }
  return browser;
}

/** `email` made a member of owner@example.com's business, and signed in. */
export async function signedInMember(fx: OAuthFixture, email: string) {
  const accounts = createAccounts(fx.server.store, fx.clock.now);
  const owner = await accounts.findAccountByEmail("owner@example.com");
  const [business] = await accounts.listBusinessesOf(owner!.id);
  const businessId = business!.business.id;
  const { accountId } = await accounts.addMember(businessId, email, "member");
  return {
    accounts,
    businessId,
    accountId,
    browser: await signInThroughForms(fx.auth, fx.outbox, email),
  };
}

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: b64url(new Uint8Array(digest)) };
}

export function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

export async function register(
  fx: Pick<OAuthFixture, "auth">,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; response: Response }> {
  const response = await fetch(`${fx.auth}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json(), response };
}

export interface TestClient {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly secret?: string;
}

export async function registerClient(
  fx: Pick<OAuthFixture, "auth">,
  extra: Record<string, unknown> = {},
): Promise<TestClient> {
  const redirectUri = (extra.redirect_uris as string[] | undefined)?.[0] ??
    "https://client.example.com/callback";
  const { status, json } = await register(fx, {
    client_name: "Test Agent",
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    ...extra,
  });
  assert.equal(status, 201, JSON.stringify(json));
  return {
    clientId: String(json.client_id),
    redirectUri,
    ...(typeof json.client_secret === "string" ? { secret: json.client_secret } : {}),
  };
}

export function authorizeUrl(
  fx: Pick<OAuthFixture, "auth">,
  params: Record<string, string>,
): string {
  return `${fx.auth}/api/auth/oauth2/authorize?${new URLSearchParams(params)}`;
}

export async function authorizeParams(
  client: TestClient,
  extra: Record<string, string> = {},
): Promise<{ params: Record<string, string>; verifier: string }> {
  const { verifier, challenge } = await pkce();
  return {
    verifier,
    params: {
      response_type: "code",
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st-" + crypto.randomUUID(),
      scope: "app.access",
      ...extra,
    },
  };
}

/** An error redirect to the client: `error`, its description, the exact `state`, `iss`, no code. */
export function assertErrorRedirect(
  fx: OAuthFixture,
  client: TestClient,
  response: Response,
  expected: { error: string; description: string; state: string },
): void {
  const location = new URL(response.headers.get("Location")!);
  assert.equal(location.origin + location.pathname, client.redirectUri);
  const query = new URLSearchParams(location.search);
  assert.equal(query.get("error"), expected.error);
  assert.equal(query.get("error_description"), expected.description);
  assert.equal(query.get("state"), expected.state);
  assert.equal(query.getAll("state").length, 1);
  assert.equal(query.get("iss"), fx.issuer);
  assert.equal(query.get("code"), null);
}

export interface ConsentChoice {
  /** Business name to pick on the choice page (when there is one). */
  readonly business?: string;
  /**
   * Scopes to tick; by default every one the human may tick (the page itself starts with
   * app.access alone), as a human granting everything asked would.
   */
  readonly scopes?: readonly string[];
  readonly decision?: "allow" | "deny";
}

/** The consent page's scope checkboxes a human may tick (not disabled). */
export function enabledScopes(page: string): string[] {
  return _scopeBoxes(page).filter((box) => box.state !== "disabled").map((box) => box.scope);
}

/** The consent page's scope checkboxes that start ticked. */
export function tickedScopes(page: string): string[] {
  return _scopeBoxes(page).filter((box) => box.state === "checked").map((box) => box.scope);
}

function _scopeBoxes(page: string): { scope: string; state: string }[] {
  return [
    ...page.matchAll(/<input type="checkbox" id="[^"]+" name="scope" value="([^"]+)"\s*(\w*)>/g),
  ].map((m) => ({ scope: m[1]!, state: m[2]! }));
}

/** Loads the authorize URL in the browser and answers the pages; returns the final redirect. */
export async function consent(
  browser: Browser,
  fx: Pick<OAuthFixture, "auth">,
  url: string,
  choice: ConsentChoice = {},
): Promise<URL> {
  const consentUrl = `${fx.auth}/api/auth/oauth2/consent`;
  let page = await browser.get(url);
  assert.equal(page.status, 200, page.text);
  if (page.text.includes('name="business"')) {
    const value = _businessValue(page.text, choice.business);
    page = await browser.post(consentUrl, {
      txn: hiddenField(page.text, "txn"),
      csrf: hiddenField(page.text, "csrf"),
      business: value,
    });
    assert.equal(page.status, 200, page.text);
  }
  const scopes = choice.scopes ?? enabledScopes(page.text);
  const body = new URLSearchParams({
    txn: hiddenField(page.text, "txn"),
    csrf: hiddenField(page.text, "csrf"),
  });
  for (const scope of scopes) body.append("scope", scope);
  body.append("decision", choice.decision ?? "allow");
  const answer = await postForm(browser, consentUrl, body);
  assert.equal(answer.status, 303, answer.text);
  // The client's redirect URI, or our own page (connecting an upstream first).
  return new URL(answer.response.headers.get("Location")!, fx.auth);
}

/**
 * Posts a form whose fields may repeat (the consent's `scope`), with the browser's cookies and
 * any further `headers` (an `Origin`).
 */
export async function postForm(
  browser: Browser,
  url: string,
  body: URLSearchParams,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; response: Response }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      ...headers,
    },
    body: body.toString(),
    redirect: "manual",
  });
  return { status: response.status, text: await response.text(), response };
}

function _businessValue(page: string, name: string | undefined): string {
  const options = [
    ...page.matchAll(/name="business" value="([^"]+)"[^>]*> <span>([^<]+) <small>/g),
  ];
  const found = name === undefined ? options[0] : options.find((m) => m[2] === name);
  assert.ok(found, `no business ${name} on the page`);
  return found[1]!;
}

export async function token(
  fx: Pick<OAuthTarget, "auth">,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; response: Response }> {
  const response = await fetch(`${fx.auth}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, json: await response.json(), response };
}

/** Runs authorize + consent and returns the code with what the exchange needs. */
export async function obtainCode(
  browser: Browser,
  fx: Pick<OAuthTarget, "auth">,
  client: TestClient,
  extra: Record<string, string> = {},
  choice: ConsentChoice = {},
): Promise<{ code: string; verifier: string; state: string; location: URL }> {
  const { params, verifier } = await authorizeParams(client, extra);
  const location = await consent(browser, fx, authorizeUrl(fx, params), choice);
  const code = location.searchParams.get("code");
  assert.ok(code, `no code in ${location}`);
  return { code, verifier, state: params.state!, location };
}

export async function exchange(
  fx: OAuthTarget,
  client: TestClient,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
) {
  return await token(fx, {
    grant_type: "authorization_code",
    code,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    code_verifier: verifier,
    resource: fx.server.apiUrl,
    ...extra,
  });
}

/**
 * Authorize, consent and exchange the code (`extra` goes to authorize, as in obtainCode): the
 * token response of a fresh grant, asserted a 200.
 */
export async function tokensFor(
  fx: OAuthTarget,
  browser: Browser,
  client: TestClient,
  extra: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const { code, verifier } = await obtainCode(browser, fx, client, extra);
  const { status, json } = await exchange(fx, client, code, verifier);
  assert.equal(status, 200, JSON.stringify(json));
  return json;
}

/** A refresh_token grant for `client`, with `extra` fields (scope, resource) and `headers`. */
export function refresh(
  fx: Pick<OAuthTarget, "auth">,
  client: TestClient,
  refreshToken: unknown,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  return token(fx, {
    grant_type: "refresh_token",
    refresh_token: String(refreshToken),
    client_id: client.clientId,
    ...extra,
  }, headers);
}

/** What a server handed out that a server on a copy of its store must keep honouring. */
export interface Handed {
  readonly client: TestClient;
  readonly tokens: { access_token: string; refresh_token: string };
  readonly jwks: unknown;
  /** The server's origins, which the tokens name: the copy serves on the same ones. */
  readonly origins: Record<string, string>;
}

/** An owner's client and its tokens on `fx`, with the keys that sign them and the origins. */
export async function handOut(fx: OAuthTarget): Promise<Handed> {
  const browser = await ownerBrowser(fx, "owner@example.com");
  const client = await registerClient(fx);
  const tokens = await tokensFor(fx, browser, client) as Handed["tokens"];
  return {
    client,
    tokens,
    jwks: await (await fetch(`${fx.auth}/api/auth/jwks`)).json(),
    origins: {
      VESTIBULE_BASE_URL: fx.server.baseUrl,
      VESTIBULE_AUTH_URL: fx.server.authUrl,
      VESTIBULE_API_URL: fx.server.apiUrl,
    },
  };
}

/**
 * `fx`, serving a copy of the store, honours what was `handed` out: the same JWKS, the access
 * token at the workspace MCP endpoint, and the refresh token (whose answer it returns).
 */
export async function assertHonoured(fx: OAuthTarget, handed: Handed) {
  assert.deepEqual(await (await fetch(`${fx.auth}/api/auth/jwks`)).json(), handed.jwks);
  const mcp = await mcpPost(`${fx.server.apiUrl}/api/mcp`, INITIALIZE, {
    "MCP-Protocol-Version": "2025-11-25",
    Authorization: `Bearer ${handed.tokens.access_token}`,
  });
  assert.equal(mcp.status, 200, await mcp.clone().text());
  await mcp.body?.cancel();
  const refreshed = await refresh(fx, handed.client, handed.tokens.refresh_token, {
    resource: fx.server.apiUrl,
  });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
  return refreshed;
}

/** The claims of a JWT, unverified (the tests verify through the server's verifier). */
export function jwtPayload(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1]!;
  const bytes = Uint8Array.from(
    atob(part.replaceAll("-", "+").replaceAll("_", "/")),
    (c) => c.charCodeAt(0),
  );
  return JSON.parse(new TextDecoder().decode(bytes));
}
