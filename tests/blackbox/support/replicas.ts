// Two replicas of the real server (main.ts with the start task's flags) on one store behind a
// round-robin HTTP proxy, as a load balancer would put them, and the flows that cross them: for
// tests/blackbox/process/replicas_test.ts.
import assert from "node:assert/strict";
import http from "node:http";
import { Browser, followLink, hiddenField, submitForm } from "./accounts_browser.ts";
import { freePorts } from "../../../testkit/ports.ts";
import { mainCommand, startTaskFlags } from "./main_process.ts";
import { enabledScopes, pkce, postForm } from "./oauth_helpers.ts";
import { startSmtpServer, type TestSmtpServer } from "./smtp_server.ts";

/** Stands for the client's address: the proxy puts it in X-Forwarded-For, as an LB would. */
export const CLIENT_HEADER = "X-Test-Client-Address";
/** Which replica answered, added by the proxy. */
export const REPLICA_HEADER = "X-Test-Replica";
export const MCP_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-06-18",
};
export const REGISTRATIONS_PER_ADDRESS = 4;

export interface Replica {
  readonly port: number;
  /** Resolves with the exit status. */
  readonly exited: Promise<Deno.CommandStatus>;
  /** kill -9. */
  crash(): void;
  /** SIGTERM, unless it crashed; resolves once it exited, 0 unless it crashed. */
  stop(): Promise<void>;
}

/** Starts main.ts in `dir`, listening on its own port for all three origins. */
async function startReplica(dir: string, env: Record<string, string>): Promise<Replica> {
  const [port] = freePorts(1);
  const child = mainCommand(await startTaskFlags(), {
    ...env,
    VESTIBULE_LISTEN: `127.0.0.1:${port}`,
  }, { cwd: dir }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const stderr = new Response(child.stderr).text();
  let output = "";
  while (!output.includes('"message":"listening"')) {
    const { value, done } = await stdout.read();
    if (done) assert.fail(`replica exited ${(await child.status).code}:\n${output}${await stderr}`);
    output += value;
  }
  // Keep reading, so that a full pipe never blocks the replica's request log.
  void (async () => {
    while (!(await stdout.read()).done);
  })();
  let crashed = false;
  return {
    port: port!,
    exited: child.status,
    crash() {
      crashed = true;
      child.kill("SIGKILL");
    },
    async stop() {
      if (!crashed) child.kill("SIGTERM");
      const { code } = await child.status;
      const said = await stderr;
      if (!crashed) assert.equal(code, 0, said);
    },
  };
}

interface Proxy {
  close(): Promise<void>;
}

/**
 * Listens on each origin's port and sends each request to the next replica, keeping `Host` (the
 * replicas tell the origins apart by it) and setting X-Forwarded-For. A replica that refuses the
 * connection is skipped, as a load balancer skips a dead upstream; nothing reached it.
 */
function startProxy(ports: readonly number[], replicas: readonly Replica[]): Proxy {
  let next = 0;
  const servers = ports.map((port) =>
    Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (request, info) => {
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
      for (let tries = 0; tries < replicas.length; tries++) {
        const index = next++ % replicas.length;
        try {
          const answer = await _forward(replicas[index]!.port, request, body, info.remoteAddr);
          answer.headers.set(REPLICA_HEADER, String(index));
          return answer;
        } catch (error) {
          if ((error as { code?: string }).code !== "ECONNREFUSED") throw error;
        }
      }
      return new Response("no replica answers", { status: 502 });
    })
  );
  return { close: async () => void await Promise.all(servers.map((s) => s.shutdown())) };
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);

/** One request to a replica through node:http, which (unlike fetch) lets `Host` through. */
function _forward(
  port: number,
  request: Request,
  body: Uint8Array | null,
  peer: Deno.NetAddr,
): Promise<Response> {
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers) {
    if (!HOP_BY_HOP.has(name) && name !== CLIENT_HEADER.toLowerCase()) headers[name] = value;
  }
  headers["x-forwarded-for"] = request.headers.get(CLIENT_HEADER) ?? peer.hostname;
  if (body) headers["content-length"] = String(body.length);
  const url = new URL(request.url);
  return new Promise((resolve, reject) => {
    const outgoing = http.request({
      host: "127.0.0.1",
      port,
      method: request.method,
      path: url.pathname + url.search,
      headers,
      agent: false,
    }, (incoming) => {
      const chunks: Uint8Array[] = [];
      incoming.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      incoming.on("error", reject);
      incoming.on("end", () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (HOP_BY_HOP.has(name) || value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) answer.append(name, one);
        }
        const status = incoming.statusCode!;
        const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const chunk of chunks) bytes.set(chunk, (at += chunk.length) - chunk.length);
        const empty = status === 204 || status === 304 || request.method === "HEAD";
        resolve(new Response(empty ? null : bytes, { status, headers: answer }));
      });
    });
    outgoing.on("error", reject);
    outgoing.end(body ?? undefined);
  });
}

/** What the whole test shares: the origins (all on the proxy), the mail server. */
export interface Deployment {
  readonly base: string;
  readonly auth: string;
  readonly api: string;
  readonly smtp: TestSmtpServer;
}

/**
 * The sign-in link of the first mail to `to` after the first `seen` mails, waiting for it (other
 * mail, such as a decision's, may arrive meanwhile).
 */
export async function mailedLink(d: Deployment, to: string, seen: number): Promise<string> {
  for (let count = seen + 1;; count++) {
    const mail = (await d.smtp.waitFor(count)).slice(seen).find((m) => m.envelopeTo.includes(to));
    if (mail === undefined) continue;
    const line = mail.text.split("\n").find((l) => l.startsWith(`${d.auth}/sign-in/`));
    assert.ok(line, `no sign-in link in the mail to ${to}`);
    return line;
  }
}

/** Signs up through the forms and the mailed link; the browser ends signed in. */
export async function signUp(d: Deployment, email: string, business: string): Promise<Browser> {
  const browser = new Browser();
  const seen = d.smtp.received.length;
  const sent = await submitForm(browser, `${d.auth}/sign-up`, `${d.auth}/sign-up`, {
    email,
    business,
  });
  assert.equal(sent.status, 200, sent.text);
  const done = await followLink(browser, await mailedLink(d, email, seen));
  assert.equal(done.status, 303, done.text);
  return browser;
}

export interface Agent {
  readonly clientId: string;
  readonly tokens: Record<string, unknown>;
}

export const REDIRECT = "http://127.0.0.1:9/callback";

/** Registration, authorization with consent in `browser`, and the code exchange. */
export async function connectAgent(d: Deployment, browser: Browser, scope: string): Promise<Agent> {
  const registered = await fetch(`${d.auth}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Replica agent",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    }),
  });
  assert.equal(registered.status, 201);
  const clientId = (await registered.json()).client_id as string;
  const { verifier, challenge } = await pkce();
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s1",
    scope,
    resource: d.api,
  });
  let page = await browser.get(`${d.auth}/api/auth/oauth2/authorize?${params}`);
  assert.equal(page.status, 200, page.text);
  const consentUrl = `${d.auth}/api/auth/oauth2/consent`;
  if (page.text.includes('name="business"')) {
    const business = page.text.match(/name="business" value="([^"]+)"/)![1]!;
    page = await browser.post(consentUrl, {
      txn: hiddenField(page.text, "txn"),
      csrf: hiddenField(page.text, "csrf"),
      business,
    });
    assert.equal(page.status, 200, page.text);
  }
  const form = new URLSearchParams({
    txn: hiddenField(page.text, "txn"),
    csrf: hiddenField(page.text, "csrf"),
  });
  for (const granted of enabledScopes(page.text)) form.append("scope", granted);
  form.append("decision", "allow");
  const answer = await postForm(browser, consentUrl, form);
  assert.equal(answer.status, 303, answer.text);
  const code = new URL(answer.response.headers.get("Location")!).searchParams.get("code");
  assert.ok(code);
  const exchanged = await tokenRequest(d, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
    resource: d.api,
  });
  assert.equal(exchanged.status, 200, JSON.stringify(exchanged.json));
  return { clientId, tokens: exchanged.json };
}

export async function tokenRequest(d: Deployment, fields: Record<string, string>) {
  const response = await fetch(`${d.auth}/api/auth/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return {
    status: response.status,
    replica: response.headers.get(REPLICA_HEADER),
    json: await response.json() as Record<string, unknown>,
  };
}

/** tools/call on the workspace endpoint: the tool's structured result. */
export async function callTool(
  d: Deployment,
  accessToken: unknown,
  name: string,
  args: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const response = await fetch(`${d.api}/api/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, Authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: args },
    }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const message = JSON.parse(text);
  assert.equal(message.result?.isError, undefined, text);
  return message.result.structuredContent;
}

/** `store`: the VESTIBULE_DATA of both replicas (by default the KV file under `dir`). */
export async function withDeployment(
  dir: string,
  store: Record<string, string>,
  during: (d: Deployment, replicas: Replica[]) => Promise<void>,
): Promise<void> {
  const smtp = await startSmtpServer();
  const [base, auth, api] = freePorts(3);
  const d: Deployment = {
    base: `http://127.0.0.1:${base}`,
    auth: `http://127.0.0.1:${auth}`,
    api: `http://127.0.0.1:${api}`,
    smtp,
  };
  const env = {
    VESTIBULE_BASE_URL: d.base,
    VESTIBULE_AUTH_URL: d.auth,
    VESTIBULE_API_URL: d.api,
    VESTIBULE_TRUST_PROXY: "on",
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: "Vestibule <no-reply@example.com>",
    VESTIBULE_RATE_LIMITS: `registration=${REGISTRATIONS_PER_ADDRESS}`,
    ...store,
  };
  // Both start at once on a fresh store: the first boot creates exactly one signing key.
  const started = await Promise.allSettled([startReplica(dir, env), startReplica(dir, env)]);
  const replicas = started.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
  const proxy = startProxy([base!, auth!, api!], replicas);
  try {
    for (const outcome of started) if (outcome.status === "rejected") throw outcome.reason;
    await during(d, replicas);
  } finally {
    await proxy.close();
    for (const replica of replicas) await replica.stop();
    await smtp.close();
  }
}

/** A form POST with the browser's cookies, telling which replica answered. */
export async function fetchAs(browser: Browser, url: string, fields: Record<string, string>) {
  const answer = await postForm(browser, url, new URLSearchParams(fields));
  return { status: answer.status, replica: answer.response.headers.get(REPLICA_HEADER) };
}
