// The OAuth sections of the behaviour transcript (testkit/transcript.ts): a client registered,
// authorized by the demo owner (sign-in link, consent) and given tokens; then the account pages,
// the revocation and what the workspace and the token endpoint answer after it.
import type { Recorder, Sent } from "./transcript_recorder.ts";

/** What the journey leaves for the later sections. */
export interface Journey {
  readonly clientId: string;
  readonly verifier: string;
  /** The authorization code, spent. */
  readonly code: string;
  /** From the refresh: the workspace's bearer token and the token to revoke. */
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Sends with the demo owner's cookies, keeping those the answer sets. */
  browse(label: string, url: string, init?: RequestInit): Promise<Sent>;
}

const REDIRECT_URI = "https://client.example.com/cb";

/** Registers a client and takes it through sign-in, consent, the token and a refresh. */
export async function recordOAuthJourney(
  rec: Recorder,
  origins: { auth: string; api: string; mailPath: string },
): Promise<Journey> {
  const { auth, api } = origins;
  const browse = browser(rec);
  const clientId = await register(rec, auth);
  const verifier = "v".repeat(50);
  const challenge = btoa(
    String.fromCharCode(
      ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
    ),
  ).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    scope: "app.access",
    resource: api,
  });
  const authorize = `${auth}/api/auth/oauth2/authorize?${params}`;
  for (
    const drop of [
      "client_id",
      "redirect_uri",
      "code_challenge",
      "response_type",
      "scope",
      "resource",
    ]
  ) {
    const p = new URLSearchParams(params);
    p.delete(drop);
    await rec.send(`authorize without ${drop}`, `${auth}/api/auth/oauth2/authorize?${p}`);
  }
  const first = await browse("authorize signed out", authorize);
  const signInUrl = first.headers.get("location")!;
  const signInPage = await browse("sign-in page", new URL(signInUrl, auth).href);
  await browse(
    "sign-in post",
    `${auth}/sign-in`,
    form({
      csrf: hidden(signInPage.text, "csrf"),
      email: "demo-owner@example.com",
      return_to: hidden(signInPage.text, "return_to"),
    }),
  );
  const link = (await mails(origins.mailPath)).at(-1)?.link as string;
  const confirm = await browse("link page", link);
  const verified = await browse(
    "link verify",
    `${auth}/sign-in/verify`,
    form({
      csrf: hidden(confirm.text, "csrf"),
      token: hidden(confirm.text, "token"),
      return_to: hidden(confirm.text, "return_to"),
    }),
  );
  let page = await browse(
    "authorize signed in",
    new URL(verified.headers.get("location") ?? authorize, auth).href,
  );
  if (page.status === 303 || page.status === 302) page = await browse("authorize again", authorize);
  const allowed = await consent(browse, auth, page);
  const code = new URL(allowed.headers.get("location")!).searchParams.get("code")!;
  await rec.send(
    "token bad verifier",
    `${auth}/api/auth/oauth2/token`,
    form({
      grant_type: "authorization_code",
      code: "nope",
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    }),
  );
  const tokenAnswer = await rec.send(
    "token",
    `${auth}/api/auth/oauth2/token`,
    form({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: api,
    }),
  );
  if (tokenAnswer.status !== 200) {
    console.error(
      "flow",
      first.status,
      signInUrl,
      signInPage.status,
      verified.status,
      verified.headers.get("location"),
      page.status,
      allowed.status,
      allowed.headers.get("location"),
      tokenAnswer.status,
      tokenAnswer.text.slice(0, 200),
    );
  }
  const tokens = JSON.parse(tokenAnswer.text);
  const refreshAnswer = await rec.send(
    "refresh",
    `${auth}/api/auth/oauth2/token`,
    form({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    }),
  );
  const refreshed = JSON.parse(refreshAnswer.text);
  for (const grant of ["password", "client_credentials", ""]) {
    await rec.send(
      `token ${grant}`,
      `${auth}/api/auth/oauth2/token`,
      form({ grant_type: grant, client_id: clientId }),
    );
  }
  return {
    clientId,
    verifier,
    code,
    accessToken: refreshed.access_token,
    refreshToken: refreshed.refresh_token,
    browse,
  };
}

/** The account page and its approvals, the revocation, and what the tokens get after it. */
export async function recordRevocation(
  rec: Recorder,
  journey: Journey,
  origins: { auth: string; workspace: string },
): Promise<void> {
  const { auth, workspace } = origins;
  const { browse, clientId } = journey;
  await browse("account", `${auth}/account`);
  const approvals = [
    ...(await browse("account again", `${auth}/account`)).text.matchAll(
      /\/approvals\/([0-9a-zA-Z-]+)/g,
    ),
  ].map((m) => m[1]!);
  for (const id of [...new Set(approvals)].slice(0, 5)) {
    await browse("approval page", `${auth}/approvals/${id}`);
  }
  await rec.send(
    "revoke",
    `${auth}/api/auth/oauth2/revoke`,
    form({ token: journey.refreshToken, client_id: clientId }),
  );
  await rec.mcp(
    "workspace after revoke",
    workspace,
    { jsonrpc: "2.0", id: 1, method: "tools/list" },
    { Authorization: `Bearer ${journey.accessToken}` },
  );
  await rec.send(
    "token replay",
    `${auth}/api/auth/oauth2/token`,
    form({
      grant_type: "authorization_code",
      code: journey.code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: journey.verifier,
    }),
  );
}

/** Registers the transcript's client, after four registrations that must fail. */
async function register(rec: Recorder, auth: string): Promise<string> {
  const reg = await rec.send("register", `${auth}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Transcript Agent",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
    }),
  });
  for (
    const body of [
      "{",
      "{}",
      JSON.stringify({ redirect_uris: ["http://evil.example/cb"] }),
      JSON.stringify({ redirect_uris: ["https://a.example/cb"], grant_types: ["password"] }),
    ]
  ) {
    await rec.send("register bad", `${auth}/api/auth/oauth2/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
  }
  return JSON.parse(reg.text).client_id as string;
}

/** The consent page answered: a business chosen when asked, then every scope allowed. */
async function consent(
  browse: Journey["browse"],
  auth: string,
  shown: Sent,
): Promise<Sent> {
  let page = shown;
  const consentUrl = `${auth}/api/auth/oauth2/consent`;
  if (page.text.includes('name="business"')) {
    const business = page.text.match(/name="business" value="([^"]+)"/)?.[1] ?? "";
    page = await browse(
      "consent business",
      consentUrl,
      form({ txn: hidden(page.text, "txn"), csrf: hidden(page.text, "csrf"), business }),
    );
  }
  const scopes = [
    ...page.text.matchAll(
      /<input type="checkbox" id="[^"]+" name="scope" value="([^"]+)"\s*(\w*)>/g,
    ),
  ].filter((m) => m[2] !== "disabled").map((m) => m[1]!);
  const decision = new URLSearchParams({
    txn: hidden(page.text, "txn"),
    csrf: hidden(page.text, "csrf"),
  });
  for (const s of scopes) decision.append("scope", s);
  decision.append("decision", "allow");
  return await browse("consent allow", consentUrl, form(decision));
}

/** A sender that keeps a cookie jar, as a browser would. */
function browser(rec: Recorder): Journey["browse"] {
  const jar = new Map<string, string>();
  return async (label, url, init = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set("Cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const r = await rec.send(label, url, { ...init, headers });
    for (const line of r.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      if (/max-age=0/i.test(line)) jar.delete(pair!.slice(0, eq));
      else jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return r;
  };
}

const hidden = (html: string, name: string) =>
  html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`))?.[1]?.replaceAll(
    "&amp;",
    "&",
  ) ?? "";
const form = (fields: Record<string, string> | URLSearchParams) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});
const mails = async (mailPath: string) =>
  (await Deno.readTextFile(mailPath).catch(() => "")).split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
