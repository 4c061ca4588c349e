// The only module that reads the environment. Everything else receives a frozen Config.
import * as v from "valibot";
import { nearestName } from "./nearest_name.ts";

export interface ListenAddress {
  readonly hostname: string;
  readonly port: number;
}

export type MailConfig =
  | { readonly kind: "log" }
  | { readonly kind: "file"; readonly path: string }
  | SmtpConfig;

/** `smtp://` (STARTTLS) or `smtps://` (TLS from the first byte). */
export interface SmtpConfig {
  readonly kind: "smtp";
  /** true for smtps: (port 465 by default); false for STARTTLS (587 by default). */
  readonly implicitTls: boolean;
  readonly host: string;
  readonly port: number;
  readonly user: string | null;
  /** From the URL; VESTIBULE_MAIL_PASSWORD_FILE is read at start-up instead when set. */
  readonly password: string | null;
  readonly passwordFile: string | null;
  /** VESTIBULE_MAIL_FROM: `addr@host` or `Display Name <addr@host>`. */
  readonly from: string;
}

/** `VESTIBULE_DATA=postgres://…`: the PostgreSQL store (src/store/pg_store.ts). */
export interface PostgresConfig {
  /** As given; show it only through maskDataUrl. */
  readonly url: string;
  /** VESTIBULE_DATA_PASSWORD_FILE, read at start-up instead of a password in the URL. */
  readonly passwordFile: string | null;
  /** VESTIBULE_DATA_POOL_SIZE: connections each process keeps at most. */
  readonly poolSize: number;
}

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
  /** VESTIBULE_DATA: a Deno KV path or `:memory:`; for PostgreSQL its URL (see `postgres`). */
  readonly dataPath: string;
  /** Set when VESTIBULE_DATA is a `postgres://` or `postgresql://` URL. */
  readonly postgres: PostgresConfig | null;
  readonly mail: MailConfig;
  /** VESTIBULE_WEBHOOK_URL and VESTIBULE_WEBHOOK_SECRET_FILE: where events go; null: nowhere. */
  readonly webhook: WebhookConfig | null;
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
  /** Open connections per process; one more closes the one waiting longest for a request. */
  readonly maxConnections: number;
  /** A new connection's first request head, or a request's body and answer, within this many ms. */
  readonly readTimeoutMs: number;
  /** A keep-alive connection waiting for its next request is closed after this many ms. */
  readonly idleTimeoutMs: number;
  /** On SIGTERM/SIGINT, requests in flight get this many ms to finish before their connection closes. */
  readonly shutdownGraceMs: number;
}

export const RATE_LIMIT_NAMES = [
  "onboarding",
  "registration",
  "token",
  "token-failure",
  "mail",
  "mail-address",
  "workspace",
  "workspace-verify",
  "cimd",
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

export interface RateLimit {
  /** Tokens added per minute. */
  readonly perMinute: number;
  /** Bucket size: the largest burst. */
  readonly burst: number;
}

export type RateLimits = Readonly<Record<RateLimitName, RateLimit>>;

/** DESIGN.md's defaults; each can be overridden in VESTIBULE_RATE_LIMITS. */
export const DEFAULT_RATE_LIMITS: RateLimits = Object.freeze({
  /** Onboarding MCP, per client address. */
  "onboarding": { perMinute: 300, burst: 100 },
  /** Dynamic client registration, per client address. */
  "registration": { perMinute: 20, burst: 20 },
  /** Token and revocation requests a client proved are its own, per client. */
  "token": { perMinute: 120, burst: 120 },
  /** Token and revocation requests that failed before that proof, per client address. */
  "token-failure": { perMinute: 60, burst: 60 },
  /** Sign-in and sign-up mail, per e-mail address: 5 per 15 minutes. */
  "mail": { perMinute: 5 / 15, burst: 5 },
  /** Sign-in and sign-up mail, per client address: 30 per 15 minutes. */
  "mail-address": { perMinute: 30 / 15, burst: 30 },
  /** Workspace MCP, per token subject and client. */
  "workspace": { perMinute: 600, burst: 120 },
  /** Signature checks of tokens not seen in the last second, per client address. */
  "workspace-verify": { perMinute: 600, burst: 200 },
  /** Client ID Metadata Document fetches, per origin. */
  "cimd": { perMinute: 10, burst: 5 },
});

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Each setting: its variable, its flag, and its default. */
const SETTINGS = {
  baseUrl: { env: "VESTIBULE_BASE_URL", default: "http://localhost:8000" },
  authUrl: { env: "VESTIBULE_AUTH_URL", default: "http://localhost:8001" },
  apiUrl: { env: "VESTIBULE_API_URL", default: "http://localhost:8002" },
  listen: { env: "VESTIBULE_LISTEN", default: "" },
  adminListen: { env: "VESTIBULE_ADMIN_LISTEN", default: "" },
  adminTokenFile: { env: "VESTIBULE_ADMIN_TOKEN_FILE", default: "" },
  dataPath: { env: "VESTIBULE_DATA", default: "./data/vestibule.kv" },
  dataPasswordFile: { env: "VESTIBULE_DATA_PASSWORD_FILE", default: "" },
  dataPoolSize: { env: "VESTIBULE_DATA_POOL_SIZE", default: "10" },
  mail: { env: "VESTIBULE_MAIL", default: "log" },
  mailFrom: { env: "VESTIBULE_MAIL_FROM", default: "" },
  mailPasswordFile: { env: "VESTIBULE_MAIL_PASSWORD_FILE", default: "" },
  mailLogPublic: { env: "VESTIBULE_MAIL_LOG_PUBLIC", default: "off" },
  webhookUrl: { env: "VESTIBULE_WEBHOOK_URL", default: "" },
  webhookSecretFile: { env: "VESTIBULE_WEBHOOK_SECRET_FILE", default: "" },
  trustedOrigins: { env: "VESTIBULE_TRUSTED_ORIGINS", default: "" },
  trustProxy: { env: "VESTIBULE_TRUST_PROXY", default: "off" },
  rateLimits: { env: "VESTIBULE_RATE_LIMITS", default: "on" },
  mcpResponse: { env: "VESTIBULE_MCP_RESPONSE", default: "json" },
  mcpPageSize: { env: "VESTIBULE_MCP_PAGE_SIZE", default: "20" },
  cimdAllowLoopback: { env: "VESTIBULE_CIMD_ALLOW_LOOPBACK", default: "off" },
  demo: { env: "VESTIBULE_DEMO", default: "off" },
  workspaceMaxBody: { env: "VESTIBULE_WORKSPACE_MAX_BODY", default: "65536" },
  maxConnections: { env: "VESTIBULE_MAX_CONNECTIONS", default: "1000" },
  readTimeoutMs: { env: "VESTIBULE_READ_TIMEOUT", default: "10" },
  idleTimeoutMs: { env: "VESTIBULE_IDLE_TIMEOUT", default: "5" },
  shutdownGraceMs: { env: "VESTIBULE_SHUTDOWN_GRACE", default: "10" },
} as const;

type SettingName = keyof typeof SETTINGS;

/** `VESTIBULE_BASE_URL` -> `--base-url`. */
export function flagName(env: string): string {
  return "--" + env.replace(/^VESTIBULE_/, "").toLowerCase().replaceAll("_", "-");
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const OriginSchema = v.pipe(
  v.string(),
  v.check((s) => URL.canParse(s), "must be an absolute URL"),
  v.transform((s) => new URL(s)),
  v.check((u) => u.protocol === "http:" || u.protocol === "https:", "must use http or https"),
  v.check(
    (u) => u.pathname === "/" && u.search === "" && u.hash === "" && u.username === "",
    "must be an origin without path, query, fragment or userinfo",
  ),
  v.check(
    (u) => u.protocol === "https:" || isLoopbackHost(u.hostname),
    "must use https unless the host is loopback",
  ),
  v.transform((u) => u.origin),
);

const SwitchSchema = v.pipe(
  v.picklist(["on", "off", "1", "0", "true", "false"], "must be on or off"),
  v.transform((s) => s === "on" || s === "1" || s === "true"),
);

const ListenSchema = v.pipe(
  v.string(),
  v.transform((s) => s.split(",").map((part) => part.trim()).filter((part) => part !== "")),
  v.array(
    v.pipe(
      v.string(),
      v.regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "must be host:port[,host:port]"),
      v.transform((s): ListenAddress => {
        const at = s.lastIndexOf(":");
        return { hostname: s.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(s.slice(at + 1)) };
      }),
      v.check((a) => a.port <= 65535, "port must be at most 65535"),
    ),
  ),
);

const MAIL_FORMS = "must be log, file:PATH, smtp://[USER:PASSWORD@]HOST[:PORT] or smtps://…";

/** What the SMTP URL gives; the sender address and the password file are added after. */
type SmtpUrl = Omit<SmtpConfig, "passwordFile" | "from">;

const SmtpUrlSchema = v.pipe(
  v.string(),
  v.check((s) => URL.canParse(s), "must be a URL: smtp://[USER:PASSWORD@]HOST[:PORT]"),
  v.transform((s) => new URL(s)),
  v.check((u) => u.hostname !== "", "must name a host"),
  v.check(
    (u) => (u.pathname === "" || u.pathname === "/") && u.search === "" && u.hash === "",
    "must not have a path, query or fragment",
  ),
  v.check((u) => u.password === "" || u.username !== "", "a password needs a user"),
  v.rawTransform(({ dataset, addIssue, NEVER }): SmtpUrl => {
    const u = dataset.value;
    try {
      const implicitTls = u.protocol === "smtps:";
      return {
        kind: "smtp",
        implicitTls,
        host: u.hostname,
        port: u.port === "" ? (implicitTls ? 465 : 587) : Number(u.port),
        user: u.username === "" ? null : decodeURIComponent(u.username),
        password: u.password === "" ? null : decodeURIComponent(u.password),
      };
    } catch {
      addIssue({ message: "user and password must be percent-encoded" });
      return NEVER;
    }
  }),
);

/** Chooses the form by its prefix, so a bad SMTP URL gets the message about what is wrong. */
const MailSchema = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }): MailConfig | SmtpUrl => {
    const value = dataset.value;
    if (value === "log") return { kind: "log" };
    if (/^file:./.test(value)) return { kind: "file", path: value.slice("file:".length) };
    const smtp = /^smtps?:\/\//.test(value) ? v.safeParse(SmtpUrlSchema, value) : null;
    if (smtp?.success) return smtp.output;
    addIssue({ message: smtp?.issues[0].message ?? MAIL_FORMS });
    return NEVER;
  }),
);

/** `addr@host` or `Display Name <addr@host>` (the name plain or quoted); "" when unset. */
const MailFromSchema = v.union([
  v.literal(""),
  v.pipe(
    v.string(),
    v.regex(
      /^(?:(?:"[^"\\\r\n]*"|[^"<>\r\n,;@]+?)\s*<[^\s<>@",;]+@[^\s<>@",;]+\.?[^\s<>@",;]*>|[^\s<>@",;]+@[^\s<>@",;]+)$/,
      'must be an address, optionally with a display name: "Name <addr@example.com>"',
    ),
  ),
]);

/**
 * The URL with its password replaced by `***`: what logs and error messages may show. Whatever
 * the scheme (a mistyped one is still echoed) and up to the last `@`, since a password may hold
 * an unencoded `/` or `@`.
 */
export function maskMailUrl(value: string): string {
  return value.replace(/^([A-Za-z][\w+.-]*:\/\/[^:@\/]*:).*@/, "$1***@");
}

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** The URL with its password replaced by `***`: what logs and error messages may show. */
export function maskDataUrl(value: string): string {
  return POSTGRES_URL.test(value) ? value.replace(/^([a-z]+:\/\/[^:@/?#]*:).*@/, "$1***@") : value;
}

/** A Deno KV path, or a PostgreSQL URL checked here so a typo stops start-up, not a request. */
const DataSchema = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.check(
    (s) => !POSTGRES_URL.test(s) || URL.canParse(s),
    "must be a URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]",
  ),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    const u = new URL(s);
    return u.hostname !== "" && u.username !== "" && u.pathname.length > 1 && u.hash === "";
  }, "must name a user, a host and a database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    const params = [...new URL(s).searchParams];
    return params.every(([name, value]) =>
      name === "sslmode" && ["disable", "require", "verify-full"].includes(value)
    );
  }, "takes one query parameter, sslmode=disable, require or verify-full"),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    try {
      const u = new URL(s);
      decodeURIComponent(u.username + u.password + u.pathname);
      return true;
    } catch {
      return false;
    }
  }, "user, password and database must be percent-encoded"),
);

/** Seconds, decimals allowed (`0.5`), as milliseconds. */
const SecondsSchema = v.pipe(
  v.string(),
  v.regex(/^\d+(\.\d{1,3})?$/, "must be a number of seconds"),
  v.transform((s) => Math.round(Number(s) * 1000)),
  v.minValue(100, "must be at least 0.1"),
  v.maxValue(3_600_000, "must be at most 3600"),
);

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
  trustedOrigins: v.pipe(
    v.string(),
    v.transform((s) => s.split(",").map((part) => part.trim()).filter((part) => part !== "")),
    v.array(OriginSchema),
  ),
  trustProxy: SwitchSchema,
  rateLimits: v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const parsed = _parseRateLimits(dataset.value);
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
  readTimeoutMs: SecondsSchema,
  idleTimeoutMs: SecondsSchema,
  shutdownGraceMs: SecondsSchema,
} satisfies Record<SettingName, v.GenericSchema<string, unknown>>;

type Parsed = { [K in SettingName]: v.InferOutput<(typeof SCHEMAS)[K]> };

/**
 * Resolves the configuration from variables and flags (`--base-url=…`, `--demo`).
 * Flags win over variables. Throws ConfigError with one line naming the bad setting.
 */
export function resolveConfig(
  env: Readonly<Record<string, string | undefined>>,
  args: readonly string[] = [],
): Config {
  const { flags, bare } = _parseFlags(args);
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
    webhook: _webhook(p),
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

const ORIGIN_SETTINGS = ["baseUrl", "authUrl", "apiUrl"] as const;

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

/**
 * Refuses the development mailer, which writes every sign-in link to the log, on a deployment
 * with a public https origin, unless VESTIBULE_MAIL_LOG_PUBLIC says it is meant.
 * For the server only: the admin commands send no sign-in links.
 */
export function checkServeConfig(config: Config): void {
  if (config.mail.kind !== "log" || config.mailLogPublic) return;
  const name = ORIGIN_SETTINGS.find((n) => !isLoopbackHost(new URL(config[n]).hostname));
  if (name === undefined) return;
  throw new ConfigError(
    `${SETTINGS.mail.env}=log writes sign-in links to the log, but ${SETTINGS[name].env}=` +
      `${JSON.stringify(config[name])} is public: configure smtp:// or file:PATH, or set ` +
      `${SETTINGS.mailLogPublic.env}=on`,
  );
}

/**
 * Warnings worth a log line at start-up: a VESTIBULE_* variable no setting reads (a typo,
 * named with the nearest known one), and plain HTTP on every interface for an https origin.
 */
export function configWarnings(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const known = Object.values(SETTINGS).map((s) => s.env as string);
  const warnings = Object.keys(env)
    .filter((name) =>
      name.startsWith("VESTIBULE_") && env[name] !== undefined && !known.includes(name)
    )
    .map((name) =>
      `unknown variable ${name} is ignored (nearest: ${
        LIKELY_TYPOS[name] ?? nearestName(name, known)
      })`
    );
  const open = config.listen.filter((a) => a.hostname === "0.0.0.0" || a.hostname === "::");
  if (open.length > 0 && ORIGIN_SETTINGS.some((n) => config[n].startsWith("https:"))) {
    warnings.push(
      `serving plain HTTP on every interface (${
        open.map((a) => `${a.hostname}:${a.port}`).join(", ")
      }) for https origins: put a TLS proxy in front and set ${SETTINGS.listen.env}, ` +
        "e.g. 127.0.0.1:8080",
    );
  }
  const hook = config.webhook && new URL(config.webhook.url);
  if (hook && hook.protocol === "http:" && !isLoopbackHost(hook.hostname)) {
    warnings.push(
      `${SETTINGS.webhookUrl.env} is plain HTTP to ${hook.host}: events are signed but readable ` +
        "on the way; use https unless that network is private",
    );
  }
  const admin = config.adminListen;
  if (admin !== null && (admin.hostname === "0.0.0.0" || admin.hostname === "::")) {
    // /metrics and /ready have no authentication (README, "Metrics and readiness").
    const host = admin.hostname.includes(":") ? `[${admin.hostname}]` : admin.hostname;
    warnings.push(
      `the operator listener ${SETTINGS.adminListen.env}=${host}:${admin.port} is on ` +
        "every interface, without authentication: bind it to loopback or a private address",
    );
  }
  return warnings;
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

/** A path setting a process uses: the store, or the mail outbox. */
export type PathSetting = "dataPath" | "mail";

/**
 * Refuses, with one line naming the variable, a configured path this process was not granted
 * (`--allow-read`/`--allow-write`): it would otherwise start fine and fail on first use.
 * Read as well as write: start-up checks the files' modes (src/private_files.ts).
 */
export function checkGrantedPaths(
  config: Config,
  settings: readonly PathSetting[],
  granted: (name: "read" | "write", path: string) => boolean = _isGranted,
): void {
  const paths: { env: string; value: string; path: string }[] = [];
  if (settings.includes("dataPath") && config.dataPath !== ":memory:" && !config.postgres) {
    paths.push({ env: SETTINGS.dataPath.env, value: config.dataPath, path: config.dataPath });
  }
  if (settings.includes("mail") && config.mail.kind === "file") {
    const path = config.mail.path;
    paths.push({ env: SETTINGS.mail.env, value: `file:${path}`, path });
  }
  for (const { env, value, path } of paths) {
    if (granted("read", path) && granted("write", path)) continue;
    throw new ConfigError(
      `${env}=${JSON.stringify(value)}: this process may not read and write ${path}; it must ` +
        "lie in a directory given to --allow-read and --allow-write (./data for deno task start)",
    );
  }
}

function _isGranted(name: "read" | "write", path: string): boolean {
  return Deno.permissions.querySync({ name, path }).state === "granted";
}

/**
 * Reads the VESTIBULE_* variables: every one when the process may list the environment, else
 * (`--allow-env=VESTIBULE_*`, which cannot list) the known names and their likeliest typos.
 */
export function readEnvironment(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  let names: string[];
  try {
    names = Object.keys(Deno.env.toObject()).filter((name) => name.startsWith("VESTIBULE_"));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) throw error;
    names = Object.values(SETTINGS).flatMap((s) => [s.env, _withoutInnerUnderscores(s.env)]);
    names.push(...Object.keys(LIKELY_TYPOS));
  }
  for (const setting of Object.values(SETTINGS)) env[setting.env] = Deno.env.get(setting.env);
  for (const name of names) env[name] ??= Deno.env.get(name);
  return env;
}

/** Names an operator may guess that no setting has, each with the setting that does its job. */
const LIKELY_TYPOS: Readonly<Record<string, string>> = {
  VESTIBULE_PORT: SETTINGS.listen.env,
  VESTIBULE_HOST: SETTINGS.listen.env,
  VESTIBULE_URL: SETTINGS.baseUrl.env,
  VESTIBULE_DATA_DIR: SETTINGS.dataPath.env,
};

/** `VESTIBULE_BASE_URL` -> `VESTIBULE_BASEURL`. */
function _withoutInnerUnderscores(env: string): string {
  return "VESTIBULE_" + env.slice("VESTIBULE_".length).replaceAll("_", "");
}

/**
 * `on`/`off` (and the other switch spellings), or overrides of single limits on top of the
 * defaults: `NAME=COUNT[/MINUTES][:BURST]`, comma-separated (`token=60,mail=10/15`).
 * Returns the limits, null for off, or the error message.
 */
function _parseRateLimits(value: string): RateLimits | null | string {
  const syntax = "must be on, off, or NAME=COUNT[/MINUTES][:BURST],…";
  const switched = v.safeParse(SwitchSchema, value);
  if (switched.success) return switched.output ? DEFAULT_RATE_LIMITS : null;
  const limits: Record<string, RateLimit> = { ...DEFAULT_RATE_LIMITS };
  for (const part of value.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const match = part.match(/^([a-z-]+)=(\d+(?:\.\d+)?)(?:\/(\d+))?(?::(\d+))?$/);
    if (!match) return syntax;
    const [, name, count, minutes, burst] = match;
    if (!(RATE_LIMIT_NAMES as readonly string[]).includes(name!)) {
      return `names a rate limit other than ${RATE_LIMIT_NAMES.join(", ")}`;
    }
    const limit = {
      perMinute: Number(count) / Number(minutes ?? 1),
      burst: Number(burst ?? count),
    };
    if (!(limit.perMinute > 0 && limit.burst >= 1)) {
      return "every rate must be above 0 with a burst of at least 1";
    }
    limits[name!] = limit;
  }
  return Object.freeze(limits as Record<RateLimitName, RateLimit>);
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
