// A behaviour transcript for structural changes: starts main.ts of a checkout (with --demo, the
// operator listener and a file outbox) and records about 1,100 requests over the three origins
// and the operator listener (every path and method, both MCP endpoints with good and bad messages
// and every tool, the OAuth journey as the demo owner), each as status, headers and body, with
// what changes from run to run masked. Two checkouts' transcripts are compared with diff:
//   deno run -A testkit/transcript.ts ../before before.jsonl
//   deno run -A testkit/transcript.ts . after.jsonl && diff before.jsonl after.jsonl
const [tree, out] = Deno.args;
if (!tree || !out) throw new Error("usage: transcript.ts CHECKOUT OUT.jsonl");

function freePorts(n: number): number[] {
  const ls = Array.from({ length: n }, () => Deno.listen({ hostname: "127.0.0.1", port: 0 }));
  const ports = ls.map((l) => (l.addr as Deno.NetAddr).port);
  ls.forEach((l) => l.close());
  return ports;
}

const [pb, pa, pi, pad] = freePorts(4);
const base = `http://127.0.0.1:${pb}`,
  auth = `http://127.0.0.1:${pa}`,
  api = `http://127.0.0.1:${pi}`;
const admin = `http://127.0.0.1:${pad}`;
const dir = await Deno.makeTempDir();
const mailPath = `${dir}/outbox.jsonl`;
const tokenFile = `${dir}/admin-token`;
await Deno.writeTextFile(tokenFile, "t".repeat(48), { mode: 0o600 });
const child = new Deno.Command("deno", {
  args: ["run", "-A", "--unstable-kv", "main.ts", "--demo"],
  cwd: tree,
  env: {
    VESTIBULE_BASE_URL: base,
    VESTIBULE_AUTH_URL: auth,
    VESTIBULE_API_URL: api,
    VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${pad}`,
    VESTIBULE_ADMIN_TOKEN_FILE: tokenFile,
    VESTIBULE_DATA: ":memory:",
    VESTIBULE_MAIL: `file:${mailPath}`,
    VESTIBULE_RATE_LIMITS: "off",
    VESTIBULE_TRUSTED_ORIGINS: "https://console.example.com",
  },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let buffer = "";
while (!buffer.includes('"listening"')) {
  const { value, done } = await lines.read();
  if (done) throw new Error("server ended: " + buffer);
  buffer += value;
}
(async () => {
  while (!(await lines.read()).done);
})();

const MASKS: [RegExp, string][] = [
  [/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "<jwt>"],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>"],
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>"],
  [/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, "<when>"],
  [/\b1[5-9]\d{11}\b/g, "<ms>"],
  [/\b1[5-9]\d{8}\b/g, "<s>"],
  [/[A-Za-z0-9_-]{22,}/g, "<opaque>"],
  [/127\.0\.0\.1(:|%3A|%253A)\d+/g, "<host>"],
  [/\b[0-9a-z]{10}-<uuid>/g, "<id>"],
];
const mask = (s: string) => MASKS.reduce((t, [re, to]) => t.replace(re, to), s);
const SKIP_HEADERS = new Set(["date", "x-request-id", "content-length"]);
const records: string[] = [];

async function send(
  label: string,
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(url, { redirect: "manual", ...init });
  const raw = new Uint8Array(await response.arrayBuffer());
  const text = response.headers.get("content-encoding") === "gzip"
    ? `<gzip ${raw.length > 0}>`
    : new TextDecoder().decode(raw);
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    if (!SKIP_HEADERS.has(k)) headers[k] = mask(v);
  });
  const isMetrics = url.endsWith("/metrics");
  records.push(JSON.stringify({
    label,
    method: init.method ?? "GET",
    url: mask(url),
    status: response.status,
    headers,
    body: isMetrics ? `<metrics ${text.length > 0}>` : mask(text),
  }));
  return { status: response.status, text, headers: response.headers };
}

// 1. Every origin × path × method.
const PATHS = [
  "/",
  "/health",
  "/llms.txt",
  "/index.json",
  "/index.md",
  "/index.html",
  "/developers",
  "/developers.json",
  "/developers.md",
  "/openapi.json",
  "/privacy",
  "/terms",
  "/contact",
  "/assets/style.css",
  "/agents",
  "/mcp",
  "/api/mcp",
  "/api/mcp/",
  "/nope",
  "/index.json/",
  "/.well-known/oauth-authorization-server/api/auth",
  "/.well-known/oauth-protected-resource",
  "/.well-known/openid-configuration/api/auth",
  "/api/auth/.well-known/oauth-authorization-server",
  "/api/auth/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server",
  "/api/auth/jwks",
  "/api/auth/oauth2/authorize",
  "/api/auth/oauth2/token",
  "/api/auth/oauth2/register",
  "/api/auth/oauth2/revoke",
  "/api/auth/oauth2/consent",
  "/account",
  "/approvals/x",
  "/sign-in",
  "/sign-in/verify",
  "/sign-out",
  "/sign-up",
];
const ORIGINS = { base, auth, api };
for (const [name, origin] of Object.entries(ORIGINS)) {
  for (const path of PATHS) {
    await send(`${name} GET`, origin + path);
    await send(`${name} GET gzip`, origin + path, { headers: { "Accept-Encoding": "gzip" } });
    await send(`${name} HEAD`, origin + path, { method: "HEAD" });
    await send(`${name} POST`, origin + path, { method: "POST", body: "" });
    await send(`${name} DELETE`, origin + path, { method: "DELETE" });
    await send(`${name} OPTIONS`, origin + path, {
      method: "OPTIONS",
      headers: {
        Origin: "https://console.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
      },
    });
    await send(`${name} OPTIONS foreign`, origin + path, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" },
    });
  }
}
// Wrong host.
await send("wrong host", `${base}/health`, { headers: { Host: "elsewhere.example" } });

// 2. MCP messages on both endpoints.
const VERSIONS = ["2025-06-18", "2025-11-25", "2026-07-28"];
async function mcp(label: string, url: string, body: unknown, extra: Record<string, string> = {}) {
  return await send(label, url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
      ...extra,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
const onboarding = `${auth}/mcp`;
for (const version of VERSIONS) {
  await mcp(`init ${version}`, onboarding, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  }, { "MCP-Protocol-Version": version });
  await mcp(`list ${version}`, onboarding, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
    "MCP-Protocol-Version": version,
  });
}
const BAD_BODIES: unknown[] = [
  "{",
  "[]",
  "null",
  "1",
  '{"jsonrpc":"2.0"}',
  { jsonrpc: "1.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "nope" },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  [{ jsonrpc: "2.0", id: 1, method: "ping" }],
  { jsonrpc: "2.0", id: null, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "nope" } },
  { jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "bogus" } },
  { jsonrpc: "2.0", id: 1, method: "resources/list" },
];
for (const body of BAD_BODIES) await mcp(`onboarding bad`, onboarding, body);
for (
  const headers of [
    { Accept: "application/json" },
    { Accept: "text/event-stream" },
    { "Content-Type": "text/plain" },
    { "MCP-Protocol-Version": "1999-01-01" },
    { Origin: "https://evil.example" },
    { Origin: "https://console.example.com" },
    { Accept: "*/*" },
  ]
) {
  await mcp(`onboarding headers ${JSON.stringify(headers)}`, onboarding, {
    jsonrpc: "2.0",
    id: 1,
    method: "ping",
  }, headers);
}

// Every onboarding tool with no arguments and with generated ones.
type Tool = {
  name: string;
  inputSchema: { properties?: Record<string, Schema>; required?: string[] };
};
type Schema = {
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
};
const sample = (s: Schema): unknown =>
  s.enum
    ? s.enum[0]
    : s.type === "string"
    ? (s.format === "email" ? "someone@example.com" : "demo")
    : s.type === "number" || s.type === "integer"
    ? (s.minimum ?? 1)
    : s.type === "boolean"
    ? true
    : s.type === "array"
    ? []
    : s.type === "object"
    ? Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sample(v)]))
    : "demo";
async function allTools(url: string, extra: Record<string, string>): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const r = await mcp("list page", url, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/list",
      ...(cursor ? { params: { cursor } } : {}),
    }, extra);
    if (r.status !== 200) throw new Error(`tools/list ${r.status}: ${r.text}`);
    const json = JSON.parse(r.text);
    tools.push(...json.result.tools);
    cursor = json.result.nextCursor;
  } while (cursor);
  return tools;
}
async function callEvery(url: string, extra: Record<string, string>) {
  for (const tool of await allTools(url, extra)) {
    await mcp(`call ${tool.name} {}`, url, {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: tool.name, arguments: {} },
    }, extra);
    const args = Object.fromEntries(
      Object.entries(tool.inputSchema.properties ?? {}).map(([k, v]) => [k, sample(v)]),
    );
    await mcp(`call ${tool.name} sample`, url, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: tool.name, arguments: args },
    }, extra);
    await mcp(`call ${tool.name} sse`, url, {
      jsonrpc: "2.0",
      id: 6,
      method: "tools/call",
      params: { name: tool.name, arguments: args, _meta: { progressToken: "p1" } },
    }, extra);
  }
}
await callEvery(onboarding, {});

// 3. The OAuth journey as the demo owner.
const jar = new Map<string, string>();
async function browse(label: string, url: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (jar.size > 0) headers.set("Cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
  const r = await send(label, url, { ...init, headers });
  for (const line of r.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    if (/max-age=0/i.test(line)) jar.delete(pair!.slice(0, eq));
    else jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return r;
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
const mails = async () =>
  (await Deno.readTextFile(mailPath).catch(() => "")).split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );

const reg = await send("register", `${auth}/api/auth/oauth2/register`, {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({
    client_name: "Transcript Agent",
    redirect_uris: ["https://client.example.com/cb"],
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
  await send("register bad", `${auth}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
}
const clientId = JSON.parse(reg.text).client_id as string;
const verifier = "v".repeat(50);
const challenge = btoa(
  String.fromCharCode(
    ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  ),
).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const params = new URLSearchParams({
  response_type: "code",
  client_id: clientId,
  redirect_uri: "https://client.example.com/cb",
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
  await send(`authorize without ${drop}`, `${auth}/api/auth/oauth2/authorize?${p}`);
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
const link = (await mails()).at(-1)?.link as string;
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
  ...page.text.matchAll(/<input type="checkbox" id="[^"]+" name="scope" value="([^"]+)"\s*(\w*)>/g),
].filter((m) => m[2] !== "disabled").map((m) => m[1]!);
const decision = new URLSearchParams({
  txn: hidden(page.text, "txn"),
  csrf: hidden(page.text, "csrf"),
});
for (const s of scopes) decision.append("scope", s);
decision.append("decision", "allow");
const allowed = await browse("consent allow", consentUrl, {
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: decision.toString(),
});
const code = new URL(allowed.headers.get("location")!).searchParams.get("code")!;
const tokenForm = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});
await send(
  "token bad verifier",
  `${auth}/api/auth/oauth2/token`,
  tokenForm({
    grant_type: "authorization_code",
    code: "nope",
    redirect_uri: "https://client.example.com/cb",
    client_id: clientId,
    code_verifier: verifier,
  }),
);
const tokenAnswer = await send(
  "token",
  `${auth}/api/auth/oauth2/token`,
  tokenForm({
    grant_type: "authorization_code",
    code,
    redirect_uri: "https://client.example.com/cb",
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
const refreshAnswer = await send(
  "refresh",
  `${auth}/api/auth/oauth2/token`,
  tokenForm({
    grant_type: "refresh_token",
    refresh_token: tokens.refresh_token,
    client_id: clientId,
  }),
);
const refreshed = JSON.parse(refreshAnswer.text);
for (const grant of ["password", "client_credentials", ""]) {
  await send(
    `token ${grant}`,
    `${auth}/api/auth/oauth2/token`,
    tokenForm({ grant_type: grant, client_id: clientId }),
  );
}

// 4. The workspace with the token, and without.
const workspace = `${api}/api/mcp`;
const bearer = { Authorization: `Bearer ${refreshed.access_token}` };
for (const h of [{}, { Authorization: "Bearer nope" }, { Authorization: "Basic x" }, bearer]) {
  await mcp("workspace auth", workspace, { jsonrpc: "2.0", id: 1, method: "ping" }, h);
}
for (const version of VERSIONS) {
  await mcp(`ws init ${version}`, workspace, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  }, { ...bearer, "MCP-Protocol-Version": version });
}
for (const body of BAD_BODIES) await mcp(`workspace bad`, workspace, body, bearer);
await callEvery(workspace, bearer);
await callEvery(workspace, bearer);
// The account page and approvals after all that.
await browse("account", `${auth}/account`);
const approvals = [
  ...(await browse("account again", `${auth}/account`)).text.matchAll(
    /\/approvals\/([0-9a-zA-Z-]+)/g,
  ),
].map((m) => m[1]!);
for (const id of [...new Set(approvals)].slice(0, 5)) {
  await browse("approval page", `${auth}/approvals/${id}`);
}
await send(
  "revoke",
  `${auth}/api/auth/oauth2/revoke`,
  tokenForm({ token: refreshed.refresh_token, client_id: clientId }),
);
await mcp(
  "workspace after revoke",
  workspace,
  { jsonrpc: "2.0", id: 1, method: "tools/list" },
  bearer,
);
await send(
  "token replay",
  `${auth}/api/auth/oauth2/token`,
  tokenForm({
    grant_type: "authorization_code",
    code,
    redirect_uri: "https://client.example.com/cb",
    client_id: clientId,
    code_verifier: verifier,
  }),
);

// 5. The operator listener.
const op = { Authorization: `Bearer ${"t".repeat(48)}` };
for (const path of ["/metrics", "/ready", "/v1/", "/v1/businesses/nope/catalogue", "/nope"]) {
  for (const h of [{}, op]) {
    await send(`admin ${path}`, admin + path, { headers: h });
    await send(`admin PUT ${path}`, admin + path, {
      method: "PUT",
      headers: { ...h, "Content-Type": "application/json" },
      body: "{}",
    });
  }
}
await Deno.writeTextFile(out, records.join("\n") + "\n");
console.error(`transcript: ${records.length} requests`);
child.kill("SIGTERM");
await child.status;
