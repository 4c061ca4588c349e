// Tracing's settings: VESTIBULE_OTEL switches it on, and the exporter takes OpenTelemetry's own
// standard variables, so a collector set up for other services needs nothing new for this one.
import { ConfigError } from "./settings.ts";

/** The standard variables read when VESTIBULE_OTEL=on (config.ts reads them with the rest). */
export const OTEL_VARIABLES = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_SERVICE_NAME",
  "OTEL_RESOURCE_ATTRIBUTES",
] as const;

/**
 * What readEnvironment records for a variable the process may not read (an older
 * `--allow-env=VESTIBULE_*,PGAPPNAME`): harmless with tracing off, a start-up error with it on.
 */
export const UNREADABLE = "\u0000unreadable";

export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface OtelConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT without a trailing slash: traces go to /v1/traces, logs to /v1/logs. */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS: sent with every export (the headers file's are added at start-up). */
  readonly headers: Readonly<Record<string, string>>;
  /** VESTIBULE_OTEL_HEADERS_FILE: headers that are secrets (a collector's API key), or null. */
  readonly headersFile: string | null;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, `key=value,…`. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
}

/** The collector a default OpenTelemetry SDK exports to (the specification's default). */
const DEFAULT_ENDPOINT = "http://localhost:4318";

/** The tracing settings, or null when VESTIBULE_OTEL is off; throws ConfigError naming a bad one. */
export function resolveOtel(
  on: boolean,
  headersFile: string,
  env: Readonly<Record<string, string | undefined>>,
): OtelConfig | null {
  if (!on) {
    if (headersFile !== "") {
      throw new ConfigError("VESTIBULE_OTEL_HEADERS_FILE needs VESTIBULE_OTEL=on");
    }
    return null;
  }
  const unreadable = OTEL_VARIABLES.find((name) => env[name] === UNREADABLE);
  if (unreadable !== undefined) {
    throw new ConfigError(
      `${unreadable} cannot be read: the process may not read OTEL_* variables ` +
        "(give --allow-env=VESTIBULE_*,PGAPPNAME,OTEL_* as deno task start does)",
    );
  }
  const endpoint = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").trim() || DEFAULT_ENDPOINT;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_ENDPOINT=${
        JSON.stringify(endpoint)
      }: must be an http(s) base URL, as in http://localhost:4318`,
    );
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "").trim() || "http/protobuf";
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${
        JSON.stringify(protocol)
      }: must be http/protobuf or http/json (grpc is not served)`,
    );
  }
  const url = new URL(endpoint);
  url.search = "";
  url.hash = "";
  return Object.freeze({
    endpoint: url.href.replace(/\/+$/, ""),
    protocol: protocol as OtlpProtocol,
    headers: Object.freeze(
      parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS ?? "", "OTEL_EXPORTER_OTLP_HEADERS"),
    ),
    headersFile: headersFile === "" ? null : headersFile,
    serviceName: (env.OTEL_SERVICE_NAME ?? "").trim() || "vestibule",
    resourceAttributes: Object.freeze(
      parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES ?? "", "OTEL_RESOURCE_ATTRIBUTES"),
    ),
  });
}

/**
 * `key=value` pairs separated by commas (or line breaks, in a headers file), values
 * percent-encoded, as the OpenTelemetry specification writes OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES. The message names `source` but never shows a value: headers are
 * often credentials.
 */
export function parseKeyValues(text: string, source: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const part of text.split(/[,\r\n]/)) {
    if (part.trim() === "") continue;
    const equals = part.indexOf("=");
    const key = part.slice(0, equals).trim();
    if (equals < 0 || key === "" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      throw new ConfigError(`${source}: each entry must be key=value, with a plain key`);
    }
    let value: string;
    try {
      value = decodeURIComponent(part.slice(equals + 1).trim());
    } catch {
      throw new ConfigError(`${source}: the value of ${key} is not valid percent-encoding`);
    }
    pairs[key] = value;
  }
  return pairs;
}
