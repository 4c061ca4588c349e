// Shared parts of the OAuth endpoint fuzz tests: an app with a registered client of each kind
// and a signed-in owner, requests as lists of fields with random mutations applied to them,
// values near the right ones, and the check that nothing secret or erroneous is logged.
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { createTestApp, type TestApp } from "../blackbox/support/harness.ts";
import { b64url } from "../blackbox/support/oauth_helpers.ts";
import { hostileText, sendTo } from "./fuzz_support.ts";

/** The most bytes of an answer the tests read. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The PKCE verifier of every issued code, and its S256 challenge. */
export const VERIFIER = "fuzz-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
export const CHALLENGE = b64url(
  new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(VERIFIER))),
);

export interface Client {
  readonly id: string;
  readonly secret: string | null;
  readonly method: "none" | "client_secret_basic" | "client_secret_post";
  readonly redirectUris: readonly string[];
}

export interface Fixture {
  readonly app: TestApp;
  readonly send: ReturnType<typeof sendTo>;
  readonly auth: string;
  readonly issuer: string;
  readonly clients: readonly Client[];
  readonly accountId: string;
  readonly businessId: string;
  /** A signed-in browser's Cookie header. */
  readonly cookie: string;
}

/** The redirect URIs every fixture client registered. */
export const REDIRECT_URIS = [
  "https://client.example.com/cb?tenant=1",
  "http://127.0.0.1/cb",
  "com.example.app:/cb",
];

/** An app with rate limits off, a client of each authentication method and a signed-in owner. */
export async function fixture(): Promise<Fixture> {
  const app = await createTestApp({ VESTIBULE_RATE_LIMITS: "off" });
  const send = sendTo(app);
  const auth = app.config.authUrl;
  const clients: Client[] = [];
  for (const method of ["none", "client_secret_basic", "client_secret_post"] as const) {
    const response = await send(`${auth}/api/auth/oauth2/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: `Fuzz ${method}`,
        redirect_uris: REDIRECT_URIS,
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: method,
      }),
    });
    assert.equal(response.status, 201);
    const body = await response.json();
    clients.push({
      id: body.client_id,
      secret: body.client_secret ?? null,
      method,
      redirectUris: REDIRECT_URIS,
    });
  }
  const { account, business } = await app.accounts.createAccountWithBusiness(
    "owner@example.com",
    "Acme",
  );
  const cookie = (await app.sessions.start(account.id)).split(";")[0]!;
  app.logs.length = 0;
  return {
    app,
    send,
    auth,
    issuer: `${auth}/api/auth`,
    clients,
    accountId: account.id,
    businessId: business.id,
    cookie,
  };
}

// ---- requests as editable lists of fields, and the mutations applied to them ----

export type Fields = [string, string][];

type Mutation =
  | { readonly op: "delete"; readonly at: number }
  | { readonly op: "set"; readonly at: number; readonly value: string }
  | { readonly op: "add"; readonly name: string; readonly value: string }
  | { readonly op: "header"; readonly name: string; readonly value: string | null }
  | { readonly op: "raw"; readonly body: string };

export interface Shaped {
  fields: Fields;
  headers: Record<string, string>;
  raw: string | null;
}

/** `base` with `mutations` applied in turn. */
export function apply(base: Shaped, mutations: readonly Mutation[]): Shaped {
  const out: Shaped = { fields: [...base.fields], headers: { ...base.headers }, raw: base.raw };
  for (const m of mutations) {
    if (m.op === "delete" && out.fields.length > 0) out.fields.splice(m.at % out.fields.length, 1);
    if (m.op === "set" && out.fields.length > 0) {
      const at = m.at % out.fields.length;
      out.fields[at] = [out.fields[at]![0], m.value];
    }
    if (m.op === "add") out.fields.push([m.name, m.value]);
    if (m.op === "header") {
      if (m.value === null) delete out.headers[m.name];
      else out.headers[m.name] = m.value;
    }
    if (m.op === "raw") out.raw = m.body;
  }
  return out;
}

/** Lists of mutations of a request with fields `names`: a quarter of them empty. */
export function mutations(
  names: readonly string[],
  values: fc.Arbitrary<string>,
  headers: fc.Arbitrary<{ name: string; value: string | null }>,
): fc.Arbitrary<readonly Mutation[]> {
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ op: fc.constant("delete" as const), at: fc.nat() }) },
    {
      weight: 4,
      arbitrary: fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: values }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("add" as const),
        name: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, hostileText),
        value: values,
      }),
    },
    {
      weight: 2,
      arbitrary: headers.map(({ name, value }) => ({ op: "header" as const, name, value })),
    },
    fc.record({
      op: fc.constant("raw" as const),
      body: fc.oneof(
        hostileText,
        fc.constantFrom("%zz=1", "a=%ff%fe", "=&=&", "grant_type=authorization_code&&&"),
      ),
    }),
  );
  // A quarter of the cases is the untouched request, which must succeed.
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
  );
}

/** The Content-Type of a form body. */
export const FORM_TYPE = "application/x-www-form-urlencoded";

/** Values near the right ones: other clients' ids and secrets, spellings of the resource. */
export function formValues(fx: Fixture, extra: readonly string[]): fc.Arbitrary<string> {
  const api = fx.app.config.apiUrl;
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        ...fx.clients.flatMap((c) => [c.id, ...(c.secret ? [c.secret] : [])]),
        ...REDIRECT_URIS,
        "http://127.0.0.1:8080/cb",
        "http://127.0.0.1:65536/cb",
        VERIFIER,
        VERIFIER + "x",
        api,
        `${api}/`,
        `${api}/api/mcp`,
        api.toUpperCase(),
        "app.access",
        "app.access members.read offline_access",
        "openid profile email",
        "nope",
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "https://127.0.0.1/client.json",
        "",
        ...extra,
      ),
    },
    hostileText,
    fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/),
  );
}

/** Asserts that no log line is an error or holds one of `secrets`; clears the logs. */
export function checkLogs(fx: Fixture, secrets: readonly string[]): void {
  for (const line of fx.app.logs.splice(0)) {
    assert.ok(!line.includes('"level":"error"'), line);
    for (const secret of secrets) assert.ok(!line.includes(secret), "a secret is logged");
  }
}
