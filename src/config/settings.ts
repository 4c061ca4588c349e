// Every setting's variable and default, and the flag spelt from the variable.
import { StartupError } from "../startup_error.ts";

export class ConfigError extends StartupError {
  override name = "ConfigError";

  override get line(): string {
    return `configuration error: ${this.message}`;
  }
}

/** Each setting: its variable, its flag, and its default. */
export const SETTINGS = {
  baseUrl: { env: "VESTIBULE_BASE_URL", default: "http://localhost:8000" },
  authUrl: { env: "VESTIBULE_AUTH_URL", default: "http://localhost:8001" },
  apiUrl: { env: "VESTIBULE_API_URL", default: "http://localhost:8002" },
  listen: { env: "VESTIBULE_LISTEN", default: "" },
  adminListen: { env: "VESTIBULE_ADMIN_LISTEN", default: "" },
  adminTokenFile: { env: "VESTIBULE_ADMIN_TOKEN_FILE", default: "" },
  dataPath: { env: "VESTIBULE_DATA", default: "./data/vestibule.kv" },
  dataPasswordFile: { env: "VESTIBULE_DATA_PASSWORD_FILE", default: "" },
  dataPoolSize: { env: "VESTIBULE_DATA_POOL_SIZE", default: "10" },
  dataTimeoutMs: { env: "VESTIBULE_DATA_TIMEOUT", default: "5" },
  mail: { env: "VESTIBULE_MAIL", default: "log" },
  mailFrom: { env: "VESTIBULE_MAIL_FROM", default: "" },
  mailPasswordFile: { env: "VESTIBULE_MAIL_PASSWORD_FILE", default: "" },
  mailLogPublic: { env: "VESTIBULE_MAIL_LOG_PUBLIC", default: "off" },
  webhookUrl: { env: "VESTIBULE_WEBHOOK_URL", default: "" },
  webhookSecretFile: { env: "VESTIBULE_WEBHOOK_SECRET_FILE", default: "" },
  upstreamsFile: { env: "VESTIBULE_UPSTREAMS", default: "" },
  upstreamKeyFile: { env: "VESTIBULE_UPSTREAM_KEY_FILE", default: "" },
  trustedOrigins: { env: "VESTIBULE_TRUSTED_ORIGINS", default: "" },
  trustProxy: { env: "VESTIBULE_TRUST_PROXY", default: "off" },
  rateLimits: { env: "VESTIBULE_RATE_LIMITS", default: "on" },
  mcpResponse: { env: "VESTIBULE_MCP_RESPONSE", default: "json" },
  mcpPageSize: { env: "VESTIBULE_MCP_PAGE_SIZE", default: "20" },
  cimdAllowLoopback: { env: "VESTIBULE_CIMD_ALLOW_LOOPBACK", default: "off" },
  demo: { env: "VESTIBULE_DEMO", default: "off" },
  workspaceMaxBody: { env: "VESTIBULE_WORKSPACE_MAX_BODY", default: "65536" },
  workspaceTools: { env: "VESTIBULE_WORKSPACE_TOOLS", default: "all" },
  maxConnections: { env: "VESTIBULE_MAX_CONNECTIONS", default: "1000" },
  readTimeoutMs: { env: "VESTIBULE_READ_TIMEOUT", default: "10" },
  idleTimeoutMs: { env: "VESTIBULE_IDLE_TIMEOUT", default: "5" },
  shutdownGraceMs: { env: "VESTIBULE_SHUTDOWN_GRACE", default: "10" },
  otel: { env: "VESTIBULE_OTEL", default: "off" },
  otelHeadersFile: { env: "VESTIBULE_OTEL_HEADERS_FILE", default: "" },
} as const;

export type SettingName = keyof typeof SETTINGS;

/** `VESTIBULE_BASE_URL` -> `--base-url`. */
export function flagName(env: string): string {
  return "--" + env.replace(/^VESTIBULE_/, "").toLowerCase().replaceAll("_", "-");
}

/** The three origins' settings. */
export const ORIGIN_SETTINGS = ["baseUrl", "authUrl", "apiUrl"] as const;
