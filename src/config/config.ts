// The only module that reads the environment. Everything else receives a frozen Config.
import * as v from "valibot";
import { nearestName } from "../nearest_name.ts";
import {
  DataSchema,
  maskDataUrl,
  POSTGRES_URL,
  type PostgresConfig,
  type StoreKind,
  storeKind,
} from "./data_url.ts";
import { type MailConfig, MailFromSchema, MailSchema, maskMailUrl } from "./mail_url.ts";
import { OTEL_VARIABLES, type OtelConfig, resolveOtel, UNREADABLE } from "./otel.ts";
import { parseRateLimits, type RateLimits } from "./rate_limit_table.ts";
import { ConfigError, flagName, ORIGIN_SETTINGS, type SettingName, SETTINGS } from "./settings.ts";
import { likelyTypos, refuseUnknownVariables } from "./typo_hints.ts";
import {
  isLoopbackHost,
  type ListenAddress,
  ListenSchema,
  OriginSchema,
  SecondsSchema,
  SwitchSchema,
} from "./values.ts";
import { runtime } from "../runtime/current.ts";

/** Which of Vestibule's own workspace tools are served (VESTIBULE_WORKSPACE_TOOLS). */
export const WORKSPACE_TOOL_CHOICES = ["all", "gateway"] as const;
export type WorkspaceToolChoice = (typeof WORKSPACE_TOOL_CHOICES)[number];

export interface WebhookConfig {
  readonly url: string;
  /** Read at start-up (src/events/webhook_target.ts): a `whsec_…` secret. */
  readonly secretFile: string;
}

export interface Config {
  /** Origins without a trailing slash, e.g. `http://localhost:8000`. */
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly apiUrl: string;
  readonly listen: readonly ListenAddress[];
  /** For messages, what set each address: `VESTIBULE_LISTEN`, or the origins' variables. */
  readonly listenSettings: readonly string[];
  /** VESTIBULE_ADMIN_LISTEN: the operator listener (GET /metrics, GET /ready), or null: off. */
  readonly adminListen: ListenAddress | null;
  /** VESTIBULE_ADMIN_TOKEN_FILE: the operator API's bearer token file, or null: the API is off. */
  readonly adminTokenFile: string | null;
  /**
   * VESTIBULE_DATA: a Deno KV path or `:memory:`, an SQLite path (`.sqlite`, `.sqlite3`, `.db`);
   * for PostgreSQL its URL (see `postgres`).
   */
  readonly dataPath: string;
  /** The store VESTIBULE_DATA selects (data_url.ts: storeKind). */
  readonly store: StoreKind;
  /** Set when VESTIBULE_DATA is a `postgres://` or `postgresql://` URL. */
  readonly postgres: PostgresConfig | null;
  readonly mail: MailConfig;
  /** VESTIBULE_WEBHOOK_URL and VESTIBULE_WEBHOOK_SECRET_FILE: where events go; null: nowhere. */
  readonly webhook: WebhookConfig | null;
  /** VESTIBULE_UPSTREAMS: the upstream MCP servers' file (src/gateway/upstreams_file.ts), or null. */
  readonly upstreamsFile: string | null;
  /**
   * VESTIBULE_UPSTREAM_KEY_FILE: the keys sealing people's upstream tokens at rest
   * (src/gateway/connect/vault.ts), or null.
   */
  readonly upstreamKeyFile: string | null;
  /** VESTIBULE_MAIL_LOG_PUBLIC: the `log` mailer may serve a public https deployment. */
  readonly mailLogPublic: boolean;
  /** The three origins plus VESTIBULE_TRUSTED_ORIGINS. */
  readonly trustedOrigins: readonly string[];
  readonly trustProxy: boolean;
  /** Every rate limit, or null when VESTIBULE_RATE_LIMITS=off (benchmarks only). */
  readonly rateLimits: RateLimits | null;
  readonly mcpResponse: "json" | "sse";
  readonly mcpPageSize: number;
  readonly cimdAllowLoopback: boolean;
  readonly demo: boolean;
  /** Body cap of the workspace MCP endpoint, in bytes. */
  readonly workspaceMaxBody: number;
  /**
   * VESTIBULE_WORKSPACE_TOOLS: `all` of Vestibule's own workspace tools, or only those every
   * agent needs beside the upstreams' (`gateway`, src/workspace/mcp/catalogue.ts).
   */
  readonly workspaceTools: WorkspaceToolChoice;
  /** Open connections per process; one more closes the one waiting longest for a request. */
  readonly maxConnections: number;
  /** A new connection's first request head, or a request's body and answer, within this many ms. */
  readonly readTimeoutMs: number;
  /** A keep-alive connection waiting for its next request is closed after this many ms. */
  readonly idleTimeoutMs: number;
  /** On SIGTERM/SIGINT, requests in flight get this many ms to finish before their connection closes. */
  readonly shutdownGraceMs: number;
  /** VESTIBULE_OTEL and the standard OTEL_* variables: where traces go, or null: tracing is off. */
  readonly otel: OtelConfig | null;
}

const SCHEMAS = {
  baseUrl: OriginSchema,
  authUrl: OriginSchema,
  apiUrl: OriginSchema,
  listen: ListenSchema,
  adminListen: v.pipe(
    ListenSchema,
    v.maxLength(1, "must be one host:port"),
    v.transform((addresses) => addresses[0] ?? null),
  ),
  adminTokenFile: v.pipe(v.string(), v.transform((s) => s === "" ? null : s)),
  dataPath: DataSchema,
  dataPasswordFile: v.string(),
  dataPoolSize: v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(1, "must be at least 1"),
    v.maxValue(1000, "must be at most 1000"),
  ),
  dataTimeoutMs: SecondsSchema,
  mail: MailSchema,
  mailFrom: MailFromSchema,
  mailPasswordFile: v.string(),
  mailLogPublic: SwitchSchema,
  webhookUrl: v.union([
    v.literal(""),
    v.pipe(
      v.string(),
      v.check((s) => URL.canParse(s), "must be an absolute http(s) URL"),
      v.check(
        (s) => !URL.canParse(s) || /^https?:$/.test(new URL(s).protocol) && new URL(s).hash === "",
        "must be an http(s) URL without a fragment",
      ),
    ),
  ]),
  webhookSecretFile: v.string(),
  upstreamsFile: v.pipe(v.string(), v.transform((s) => s === "" ? null : s)),
  upstreamKeyFile: v.pipe(v.string(), v.transform((s) => s === "" ? null : s)),
  trustedOrigins: v.pipe(
    v.string(),
    v.transform((s) => s.split(",").map((part) => part.trim()).filter((part) => part !== "")),
    v.array(OriginSchema),
  ),
  trustProxy: SwitchSchema,
  rateLimits: v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const parsed = parseRateLimits(dataset.value);
      if (typeof parsed === "string") {
        addIssue({ message: parsed });
        return NEVER;
      }
      return parsed;
    }),
  ),
  mcpResponse: v.picklist(["json", "sse"], "must be json or sse"),
  mcpPageSize: v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(1, "must be at least 1"),
    v.maxValue(1000, "must be at most 1000"),
  ),
  cimdAllowLoopback: SwitchSchema,
  demo: SwitchSchema,
  workspaceMaxBody: v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number of bytes"),
    v.transform(Number),
    v.minValue(1024, "must be at least 1024"),
    v.maxValue(16 * 1024 * 1024, "must be at most 16777216"),
  ),
  maxConnections: v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(1, "must be at least 1"),
    v.maxValue(1_000_000, "must be at most 1000000"),
  ),
  workspaceTools: v.picklist(WORKSPACE_TOOL_CHOICES, "must be all or gateway"),
  readTimeoutMs: SecondsSchema,
  idleTimeoutMs: SecondsSchema,
  shutdownGraceMs: SecondsSchema,
  otel: SwitchSchema,
  otelHeadersFile: v.string(),
} satisfies Record<SettingName, v.GenericSchema<string, unknown>>;

type Parsed = { [K in SettingName]: v.InferOutput<(typeof SCHEMAS)[K]> };

/**
 * Resolves the configuration from variables and flags (`--base-url=…`, `--demo`).
 * Flags win over variables. Throws ConfigError with one line naming the bad setting, or the
 * unknown variable or flag with the nearest known name.
 */
export function resolveConfig(
  env: Readonly<Record<string, string | undefined>>,
  args: readonly string[] = [],
): Config {
  const { flags, bare } = _parseFlags(args);
  refuseUnknownVariables(env);
  const parsed: Partial<Record<SettingName, unknown>> = {};
  for (
    const [name, setting] of Object.entries(SETTINGS) as [
      SettingName,
      typeof SETTINGS[SettingName],
    ][]
  ) {
    const flag = flagName(setting.env);
    if (bare.has(flag) && SCHEMAS[name] !== SwitchSchema) {
      // Only a switch stands alone; `--data PATH` would otherwise read as --data=on.
      throw new ConfigError(`${flag} needs a value: ${flag}=VALUE`);
    }
    const raw = flags.get(flag) ?? env[setting.env] ?? setting.default;
    const result = v.safeParse(SCHEMAS[name], raw);
    if (!result.success) {
      const source = flags.has(flag) ? flag : setting.env;
      const shown = name === "mail"
        ? maskMailUrl(raw)
        : name === "dataPath"
        ? maskDataUrl(raw)
        : raw;
      throw new ConfigError(`${source}=${JSON.stringify(shown)}: ${result.issues[0].message}`);
    }
    parsed[name] = result.output;
  }
  const p = parsed as Parsed;
  const origins = [p.baseUrl, p.authUrl, p.apiUrl];
  _refuseSharedOrigins(p);
  const listen = p.listen.length > 0 ? p.listen : _listenFromOrigins(origins);
  _refusePublicAdminListen(p.adminListen, listen);
  if (p.adminTokenFile !== null && p.adminListen === null) {
    throw new ConfigError(
      `${SETTINGS.adminTokenFile.env} needs ${SETTINGS.adminListen.env}: the operator API is ` +
        "served on the operator listener",
    );
  }
  return Object.freeze({
    ...p,
    mail: _withSmtpSettings(p),
    postgres: _postgres(p),
    store: storeKind(p.dataPath),
    webhook: _webhook(p),
    otel: resolveOtel(p.otel, p.otelHeadersFile, env),
    listen: Object.freeze(listen),
    listenSettings: Object.freeze(
      listen.map((address) =>
        p.listen.length > 0 ? SETTINGS.listen.env : ORIGIN_SETTINGS
          .filter((n) => _sameAddress(_listenFromOrigins([p[n]])[0]!, address))
          .map((n) => SETTINGS[n].env)
          .join(", ")
      ),
    ),
    trustedOrigins: Object.freeze([...new Set([...origins, ...p.trustedOrigins])]),
  });
}

/**
 * The operator listener must never be one of the public listeners: their port is what a proxy
 * or the internet reaches, and metrics are for the operator only. Same port, any host: an
 * address on 0.0.0.0 or :: would take every interface's port.
 */
function _refusePublicAdminListen(
  admin: ListenAddress | null,
  listen: readonly ListenAddress[],
): void {
  const clash = admin && listen.find((address) => address.port === admin.port);
  if (!admin || !clash) return;
  throw new ConfigError(
    `${SETTINGS.adminListen.env}=${JSON.stringify(`${admin.hostname}:${admin.port}`)}: ` +
      `port ${admin.port} serves the public origins; the operator listener needs a port of its own`,
  );
}

/**
 * Each site is found by its Host (src/http/host_router.ts), so two origins on one host and port
 * would leave one site unreachable: every path of the other is a 404. Refused at start-up.
 */
function _refuseSharedOrigins(p: Parsed): void {
  const seen = new Map<string, SettingName>();
  for (const name of ORIGIN_SETTINGS) {
    const url = new URL(p[name]);
    const host = `${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`;
    const other = seen.get(host);
    if (other !== undefined) {
      throw new ConfigError(
        `${SETTINGS[other].env}=${JSON.stringify(p[other])} and ${SETTINGS[name].env}=` +
          `${JSON.stringify(p[name])} share the host ${host}: each of the three origins needs ` +
          "its own host name or port",
      );
    }
    seen.set(host, name);
  }
}

/** The PostgreSQL settings when VESTIBULE_DATA is its URL; the other data settings need one. */
function _postgres(p: Parsed): PostgresConfig | null {
  if (!POSTGRES_URL.test(p.dataPath)) {
    if (p.dataPasswordFile !== "") {
      throw new ConfigError(
        `${SETTINGS.dataPasswordFile.env} needs ${SETTINGS.dataPath.env}=postgres://USER@HOST/DATABASE`,
      );
    }
    return null;
  }
  return Object.freeze({
    url: p.dataPath,
    passwordFile: p.dataPasswordFile === "" ? null : p.dataPasswordFile,
    poolSize: p.dataPoolSize,
    deadlineMs: p.dataTimeoutMs,
  });
}

/** The events' endpoint, which needs its signing secret; a secret alone is a mistake too. */
function _webhook(p: Parsed): WebhookConfig | null {
  const { webhookUrl: url, webhookSecretFile: secretFile } = p;
  if (url === "" && secretFile === "") return null;
  if (url === "") {
    throw new ConfigError(
      `${SETTINGS.webhookSecretFile.env} is set but ${SETTINGS.webhookUrl.env} is not: ` +
        "name the endpoint events go to",
    );
  }
  if (secretFile === "") {
    throw new ConfigError(
      `${SETTINGS.webhookSecretFile.env} is required with ${SETTINGS.webhookUrl.env}: ` +
        "a file holding the signing secret (whsec_…)",
    );
  }
  return Object.freeze({ url, secretFile });
}

/** Completes an SMTP mail setting with the sender and the password file, which it requires. */
function _withSmtpSettings(p: Parsed): MailConfig {
  if (p.mail.kind !== "smtp") return p.mail;
  if (p.mailFrom === "") {
    throw new ConfigError(`${SETTINGS.mailFrom.env} is required with SMTP mail`);
  }
  if (p.mailPasswordFile !== "" && p.mail.user === null) {
    throw new ConfigError(
      `${SETTINGS.mailPasswordFile.env} needs a user in ${SETTINGS.mail.env} (smtp://USER@HOST)`,
    );
  }
  return Object.freeze({
    ...p.mail,
    from: p.mailFrom,
    passwordFile: p.mailPasswordFile === "" ? null : p.mailPasswordFile,
  });
}

/**
 * Reads the VESTIBULE_* variables (and tracing's standard OTEL_* ones): every one when the process may list the environment, else
 * (`--allow-env=VESTIBULE_*`, which cannot list) the known names and every name one slip away.
 */
export function readEnvironment(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  const names = runtime.envNames()?.filter((name) => name.startsWith("VESTIBULE_")) ??
    likelyTypos();
  for (const setting of Object.values(SETTINGS)) env[setting.env] = runtime.env(setting.env);
  for (const name of names) {
    if (name in env) continue;
    const value = runtime.env(name);
    if (value !== undefined) env[name] = value;
  }
  for (const name of OTEL_VARIABLES) {
    try {
      env[name] = runtime.env(name);
    } catch {
      // Not permitted (an older --allow-env): an error only if tracing is on (otel.ts).
      env[name] = UNREADABLE;
    }
  }
  return env;
}

/** The flags given, and those given bare (a switch's "on"). */
function _parseFlags(
  args: readonly string[],
): { flags: Map<string, string>; bare: Set<string> } {
  const known = new Set(Object.values(SETTINGS).map((s) => flagName(s.env)));
  const flags = new Map<string, string>();
  const bare = new Set<string>();
  let previous: string | undefined;
  for (const arg of args) {
    if (!arg.startsWith("--")) {
      // `--mail smtp://…`: the value came after a space. Masked: it may carry a password.
      throw new ConfigError(
        `unexpected argument ${
          JSON.stringify(maskMailUrl(arg))
        }: a flag takes its value after =, ` +
          `as in ${previous ?? "--name"}=VALUE`,
      );
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    previous = name;
    if (!known.has(name)) {
      throw new ConfigError(`unknown flag ${name} (expected: ${nearestName(name, [...known])})`);
    }
    flags.set(name, eq === -1 ? "on" : arg.slice(eq + 1));
    if (eq === -1) bare.add(name);
  }
  return { flags, bare };
}

function _sameAddress(a: ListenAddress, b: ListenAddress): boolean {
  return a.hostname === b.hostname && a.port === b.port;
}

/** One listener per distinct host:port of the origins; `localhost` binds the IPv4 loopback. */
function _listenFromOrigins(origins: readonly string[]): ListenAddress[] {
  const seen = new Map<string, ListenAddress>();
  for (const origin of origins) {
    const url = new URL(origin);
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const bare = url.hostname.replace(/^\[|\]$/g, "");
    const hostname = bare === "localhost"
      ? "127.0.0.1"
      : isLoopbackHost(url.hostname)
      ? bare
      : "0.0.0.0";
    seen.set(`${hostname}:${port}`, { hostname, port });
  }
  return [...seen.values()];
}
