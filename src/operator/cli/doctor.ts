// `admin check`: the configuration, store and mail transport, and with `live` the public URLs
// as an agent walks them. One finding per line; a fault is what would break a deployment.
import { type Config } from "../../config/config.ts";
import { checkGrantedPaths } from "../../config/granted_paths.ts";
import { ConfigError } from "../../config/settings.ts";
import { refuseUnknownVariables } from "../../config/typo_hints.ts";
import { checkServeConfig, configWarnings } from "../../config/warnings.ts";
import { checkMailTransport } from "../../mail/transport.ts";
import { loadWebhookTarget, WebhookTargetError } from "../../events/webhook_target.ts";
import type { UpstreamsConfig } from "../../config/upstreams.ts";
import { loadUpstreams, UpstreamsFileError } from "../../gateway/upstreams_file.ts";
import { missingKeyFile } from "../../gateway/connect/vault.ts";
import { loadVault, VaultKeyFileError } from "../../gateway/connect/vault.ts";
import { AdminTokenError, readAdminToken } from "../api_token.ts";
import { ISSUER_PATH, issuerOf } from "../../oauth/issuer.ts";
import { currentSigningKid } from "../../oauth/signing_keys.ts";
import { CURRENT_SCHEMA, readSchemaVersion } from "../../schema.ts";
import type { Store } from "../../store/store.ts";
import { resourceMetadataUrl } from "../../workspace/mcp/bearer.ts";
import { describeTransport, type Probe, probeUpstreams } from "./upstream_probe.ts";
import { describeUnlisted, unlistedNames } from "../../gateway/unlisted_names.ts";
import { countOf } from "../../count_words.ts";
import { fault, type Finding, ok, warn } from "./findings.ts";
import { placeholderChecks } from "./placeholder_checks.ts";
import { discoveryChecks } from "./discovery_checks.ts";

export { type Finding, formatFinding } from "./findings.ts";

export interface OfflineDeps {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly store: Store;
  /** Permission lookup (tests); the runtime's by default. */
  readonly granted?: (name: "read" | "write", path: string) => boolean;
  /** EHLO and AUTH against the SMTP server, nothing sent; nodemailer's verify() by default. */
  readonly verifySmtp?: (config: Config) => Promise<void>;
  /** The templates start-up reads (tests: an edited copy); static/ by default. */
  readonly staticDir?: URL;
}

/** The start-up checks, the store's version and key, and the mail transport. */
export async function offlineChecks(deps: OfflineDeps): Promise<Finding[]> {
  const { config, env, store } = deps;
  const findings: Finding[] = [ok("configuration parses; the three origins are distinct", "env")];
  try {
    checkServeConfig(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    findings.push(fault(`the server would refuse to start: ${error.message}`, "VESTIBULE_MAIL"));
  }
  try {
    refuseUnknownVariables(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    findings.push(fault(`the server would refuse to start: ${error.message}`, "env"));
  }
  for (const warning of configWarnings(config)) findings.push(warn(warning, "env"));
  try {
    checkGrantedPaths(config, ["dataPath", "mail"], ...(deps.granted ? [deps.granted] : []));
    findings.push(ok("the store and mail paths are readable and writable", "permissions"));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    findings.push(fault(error.message, "permissions"));
  }
  findings.push(...await placeholderChecks(config.baseUrl, deps.staticDir));
  findings.push(...await _storeChecks(store));
  findings.push(await _mailCheck(config, deps.verifySmtp ?? _verifySmtp));
  if (config.adminTokenFile !== null) findings.push(await _adminTokenCheck(config.adminTokenFile));
  if (config.webhook !== null) findings.push(await _webhookSecretCheck(config.webhook));
  if (config.upstreamKeyFile !== null) {
    findings.push(await _upstreamKeyCheck(config.upstreamKeyFile));
  }
  return findings;
}

/** The keys sealing people's upstream tokens, loaded as start-up loads them; never shown. */
async function _upstreamKeyCheck(path: string): Promise<Finding> {
  const where = "VESTIBULE_UPSTREAM_KEY_FILE";
  try {
    await loadVault(path);
    return ok("the upstream token key file is private and every key in it loads", where);
  } catch (error) {
    if (!(error instanceof VaultKeyFileError)) throw error;
    return fault(`the upstream token keys do not load: ${error.message}`, where);
  }
}

/** The events' signing secret, read as start-up reads it; the secret is never shown. */
async function _webhookSecretCheck(webhook: NonNullable<Config["webhook"]>): Promise<Finding> {
  const where = "VESTIBULE_WEBHOOK_SECRET_FILE";
  try {
    await loadWebhookTarget(webhook);
    return ok(
      `events are signed with a private whsec_ secret and go to ${new URL(webhook.url).origin}`,
      where,
    );
  } catch (error) {
    if (!(error instanceof WebhookTargetError)) throw error;
    return fault(`the server would refuse to start: ${error.message}`, where);
  }
}

/** The operator API's token file, checked as start-up checks it; the token is never shown. */
async function _adminTokenCheck(path: string): Promise<Finding> {
  const where = "VESTIBULE_ADMIN_TOKEN_FILE";
  try {
    await readAdminToken(path);
    return ok("the operator API token file is private and holds a long enough token", where);
  } catch (error) {
    if (!(error instanceof AdminTokenError)) throw error;
    return fault(`the server would refuse to start: ${error.message}`, where);
  }
}

/**
 * VESTIBULE_UPSTREAMS read as start-up reads it (its header and environment files included),
 * and with `live` each upstream reached through the gateway's client: one line each, a fault
 * when it does not answer or lacks a tool the file names (the gateway would hold its tools).
 * Nothing when the gateway has no upstreams.
 */
export async function upstreamChecks(
  path: string | null,
  live: boolean,
  probe: (config: UpstreamsConfig) => Promise<Probe[]> = probeUpstreams,
  keyFile: string | null = null,
): Promise<Finding[]> {
  if (path === null) return [];
  const where = "VESTIBULE_UPSTREAMS";
  let config;
  try {
    config = await loadUpstreams(path);
  } catch (error) {
    if (!(error instanceof UpstreamsFileError)) throw error;
    return [fault(`the server would refuse to start: ${error.message}`, where)];
  }
  const names = config.upstreams.map((upstream) => upstream.name);
  const findings = [
    ok(`${countOf(names.length, "upstream")} declared: ${names.join(", ")}`, where),
  ];
  const keyProblem = missingKeyFile(config, keyFile);
  if (keyProblem !== null) {
    findings.push(fault(`the server would refuse to start: ${keyProblem}`, where));
  }
  if (!live) return findings;
  for (const result of await probe(config)) {
    const { name, hidden } = result.upstream;
    const at = describeTransport(result.upstream);
    if (!result.reached) {
      findings.push(fault(`upstream ${name} does not answer: ${result.problem}`, at));
      continue;
    }
    if ("signIn" in result) {
      findings.push(ok(
        `upstream ${name} needs each person's sign-in, at ${result.signIn.issuer} (checked)`,
        at,
      ));
      continue;
    }
    const unlisted = unlistedNames(result.upstream, result.tools.map((t) => t.definition.name));
    if (unlisted.length > 0) {
      findings.push(fault(
        `upstream ${name} answers, and none of its tools would be served: VESTIBULE_UPSTREAMS ` +
          `names tools it does not list: ${describeUnlisted(unlisted)}`,
        at,
      ));
      continue;
    }
    const served = result.tools.filter((tool) => !hidden.has(tool.definition.name)).length;
    const left = result.tools.length - served;
    findings.push(ok(
      `upstream ${name} answers (protocol ${result.protocolVersion}) with ${
        countOf(served, "tool")
      }` +
        (left > 0 ? ` and ${left} hidden` : ""),
      at,
    ));
  }
  return findings;
}

async function _storeChecks(store: Store): Promise<Finding[]> {
  const where = "VESTIBULE_DATA";
  const version = await readSchemaVersion(store);
  if (version === null) {
    let empty = true;
    for await (const _ of store.list([], { limit: 1 })) empty = false;
    return [
      empty
        ? warn(
          "the store is new: the server stamps schema version " +
            `${CURRENT_SCHEMA} and creates a signing key when it first starts`,
          where,
        )
        : warn(
          `the store has no schema version: the server migrates it to ${CURRENT_SCHEMA} at start-up`,
          where,
        ),
    ];
  }
  const findings: Finding[] = [];
  if (version > CURRENT_SCHEMA) {
    findings.push(fault(
      `the store is at schema version ${version}, newer than this release knows ` +
        `(${CURRENT_SCHEMA}): run the release that wrote it, or restore a backup made for this one`,
      where,
    ));
  } else if (version < CURRENT_SCHEMA) {
    findings.push(warn(
      `the store is at schema version ${version}: the server migrates it to ${CURRENT_SCHEMA} at start-up`,
      where,
    ));
  } else findings.push(ok(`the store answers at schema version ${version}`, where));
  const kid = await currentSigningKid(store);
  findings.push(
    kid === null
      ? fault(
        "the store has no signing key: run `deno task admin rotate-signing-key` to create one",
        where,
      )
      : ok(`the store has a current signing key (kid ${kid})`, where),
  );
  return findings;
}

async function _mailCheck(
  config: Config,
  verify: (config: Config) => Promise<void>,
): Promise<Finding> {
  const where = "VESTIBULE_MAIL";
  if (config.mail.kind === "log") return ok("mail goes to the log (development)", where);
  if (config.mail.kind === "file") return ok(`mail is written to ${config.mail.path}`, where);
  const server = `${config.mail.host}:${config.mail.port}`;
  try {
    await verify(config);
    return ok(`the SMTP server ${server} answers EHLO and AUTH (nothing sent)`, where);
  } catch (error) {
    return fault(
      `the SMTP server ${server} does not answer EHLO and AUTH: ${(error as Error).message}`,
      where,
    );
  }
}

function _verifySmtp(config: Config): Promise<void> {
  return checkMailTransport(config.mail, { clientName: new URL(config.authUrl).hostname });
}

/** The four authorization-server metadata locations of DESIGN.md, on {auth_url}. */
const AS_METADATA_PATHS = [
  `/.well-known/oauth-authorization-server${ISSUER_PATH}`,
  `${ISSUER_PATH}/.well-known/oauth-authorization-server`,
  `/.well-known/openid-configuration${ISSUER_PATH}`,
  `${ISSUER_PATH}/.well-known/openid-configuration`,
];

const TIMEOUT_MS = 5000;
// The server names itself from its configuration, never from the request: a mismatch means the
// server behind this URL was started with other origins (often the proxy's upstream address).
const PROXY_HINT =
  "is the server behind the proxy started with these public URLs, and does the proxy forward the Host header?";

/** What an agent fetches, in the order it would; every answer checked against the config. */
export async function liveChecks(config: Config, fetcher: typeof fetch): Promise<Finding[]> {
  const findings: Finding[] = [];
  const get = async (url: string, init: RequestInit = {}): Promise<Response | null> => {
    try {
      return await fetcher(url, {
        ...init,
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      findings.push(fault(`cannot reach it: ${_unreachable(error)}`, url));
      return null;
    }
  };
  /** The JSON body of a 200, or null with a fault. */
  const json = async (url: string, init?: RequestInit): Promise<Record<string, unknown> | null> => {
    const response = await get(url, init);
    if (response === null) return null;
    if (response.status !== 200) {
      findings.push(fault(`expected 200, got ${await _why(response)}`, url));
      return null;
    }
    try {
      const text = await response.text();
      // An MCP answer may come as one SSE event (VESTIBULE_MCP_RESPONSE=sse): its data line.
      const sse = (response.headers.get("Content-Type") ?? "").startsWith("text/event-stream");
      const body = JSON.parse(sse ? text.match(/^data: ?(.*)$/m)?.[1] ?? "" : text);
      if (typeof body === "object" && body !== null) return body;
    } catch { /* reported below */ }
    findings.push(fault("the body is not a JSON object", url));
    return null;
  };

  for (const path of ["/health", "/llms.txt"]) {
    const url = `${config.baseUrl}${path}`;
    const response = await get(url);
    if (response === null) continue;
    if (response.status === 200) {
      await response.body?.cancel();
      findings.push(ok("answers 200", url));
    } else findings.push(fault(`expected 200, got ${await _why(response)}`, url));
  }
  for (const path of ["/index.json", "/developers.json", "/openapi.json"]) {
    const url = `${config.baseUrl}${path}`;
    if (await json(url)) findings.push(ok("answers 200 with JSON", url));
  }

  const issuer = issuerOf(config);
  const prmUrl = resourceMetadataUrl(config);
  const prm = await json(prmUrl);
  if (prm) {
    const servers = prm["authorization_servers"];
    if (prm["resource"] !== config.apiUrl) {
      findings.push(fault(
        `resource is ${JSON.stringify(prm["resource"])} but VESTIBULE_API_URL is ` +
          `${config.apiUrl}: ${PROXY_HINT}`,
        prmUrl,
      ));
    } else if (!Array.isArray(servers) || servers.length !== 1 || servers[0] !== issuer) {
      findings.push(fault(
        `authorization_servers is ${JSON.stringify(servers)} but the issuer is ${issuer}: ` +
          PROXY_HINT,
        prmUrl,
      ));
    } else findings.push(ok(`resource ${config.apiUrl}, authorization server ${issuer}`, prmUrl));
  }

  let jwksUri: unknown = undefined;
  let metadataAnswered = false;
  for (const path of AS_METADATA_PATHS) {
    const url = `${config.authUrl}${path}`;
    const metadata = await json(url);
    if (!metadata) continue;
    metadataAnswered = true;
    if (metadata["issuer"] !== issuer) {
      findings.push(fault(
        `issuer in metadata is ${JSON.stringify(metadata["issuer"])} but VESTIBULE_AUTH_URL ` +
          `gives ${issuer}: ${PROXY_HINT}`,
        url,
      ));
      continue;
    }
    jwksUri ??= metadata["jwks_uri"];
    findings.push(ok(`issuer ${issuer}`, url));
  }
  if (typeof jwksUri === "string") {
    const jwks = await json(jwksUri);
    const keys = jwks?.["keys"];
    if (jwks && Array.isArray(keys) && keys.length > 0) {
      findings.push(ok(`${countOf(keys.length, "signing key")} published`, jwksUri));
    } else if (jwks) findings.push(fault("the JWKS has no keys", jwksUri));
  } else if (metadataAnswered) {
    findings.push(fault("the metadata has no jwks_uri", config.authUrl));
  }

  await _onboarding(`${config.authUrl}/mcp`, json, findings);
  findings.push(...await discoveryChecks(config, get));

  const mcpUrl = `${config.apiUrl}/api/mcp`;
  const challenge = await get(mcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  if (challenge) {
    const header = challenge.headers.get("WWW-Authenticate") ?? "";
    if (challenge.status !== 401) {
      findings.push(fault(`expected 401 without a token, got ${await _why(challenge)}`, mcpUrl));
      return findings;
    }
    await challenge.body?.cancel();
    if (!header.includes(`resource_metadata="${prmUrl}"`)) {
      findings.push(fault(
        `WWW-Authenticate ${JSON.stringify(header)} does not point at ${prmUrl}: ${PROXY_HINT}`,
        mcpUrl,
      ));
    } else findings.push(ok(`401 challenge points at ${prmUrl}`, mcpUrl));
  }
  return findings;
}

const MCP_VERSION = "2025-11-25";

async function _onboarding(
  url: string,
  json: (url: string, init?: RequestInit) => Promise<Record<string, unknown> | null>,
  findings: Finding[],
): Promise<void> {
  const post = (body: unknown): RequestInit => ({
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": MCP_VERSION,
    },
    body: JSON.stringify(body),
  });
  const init = await json(
    url,
    post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: MCP_VERSION,
        capabilities: {},
        clientInfo: { name: "vestibule-doctor", version: "1" },
      },
    }),
  );
  if (!init) return;
  if (!init["result"]) {
    findings.push(fault(`initialize failed: ${JSON.stringify(init["error"])}`, url));
    return;
  }
  const list = await json(url, post({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
  if (!list) return;
  const tools = (list["result"] as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools) || tools.length === 0) {
    findings.push(fault(`tools/list lists no tools: ${JSON.stringify(list["error"])}`, url));
    return;
  }
  findings.push(ok(`initialize and tools/list answer (${countOf(tools.length, "tool")})`, url));
}

/**
 * The status and what likely happened: a redirect (http to https, a dropped path) with its
 * target, another Host (421), or else the server's own words from the body (a JSON-RPC
 * `error.message`, an OAuth `error_description`, or a short text), which say why.
 */
async function _why(response: Response): Promise<string> {
  const location = response.headers.get("Location");
  const text = await response.text().catch(() => "");
  if (location !== null) return `${response.status} (redirect to ${location})`;
  if (response.status === 421) {
    // RFC 9110 §15.5.20: the host router's answer to a Host it does not serve.
    return "421: the server does not serve this Host; does the proxy forward the Host header " +
      "(nginx: proxy_set_header Host $host, or $http_host when the URL has a port), and is the " +
      "server started with this URL?";
  }
  const said = _serverWords(text, response.headers.get("Content-Type") ?? "");
  return said === null ? String(response.status) : `${response.status} (${JSON.stringify(said)})`;
}

const WORDS_MAX = 200;

function _serverWords(text: string, type: string): string | null {
  let said: unknown = null;
  if (type.includes("json")) {
    try {
      const body = JSON.parse(text);
      said = body?.error?.message ?? body?.error_description ?? body?.error;
    } catch { /* not JSON after all: nothing to quote */ }
  } else if (type.startsWith("text/plain")) said = text.trim().split("\n")[0];
  if (typeof said !== "string" || said === "") return null;
  return said.length > WORDS_MAX ? `${said.slice(0, WORDS_MAX)}…` : said;
}

/**
 * Why a fetch failed: Deno's TypeError says only "fetch failed"; its cause says what (a DNS
 * error, a refused connection, a certificate the TLS client rejects), after a prefix repeating
 * the URL, which the finding names already.
 */
function _unreachable(error: unknown): string {
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return `no answer within ${TIMEOUT_MS / 1000} s`;
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const message = cause instanceof Error ? cause.message : (error as Error).message;
  return message.replace(/^error sending request for url \([^)]*\): /, "");
}
