/**
 * The one place that decides whether this process traces: with VESTIBULE_OTEL off it hands out
 * NO_TRACING and loads nothing; on, it reads the headers file and loads the OpenTelemetry SDK.
 */
import type { OtelConfig } from "../config/otel.ts";
import { parseKeyValues } from "../config/otel.ts";
import { PrivateFileError, refuseOpenFile } from "../private_files.ts";
import { runtime } from "../runtime/current.ts";
import { StartupError } from "../startup_error.ts";
import { NO_TRACING, type Tracing } from "./tracing.ts";

export async function openTracing(
  config: OtelConfig | null,
  warn: (fields: Record<string, unknown>) => void,
): Promise<Tracing> {
  if (config === null) return NO_TRACING;
  const headers = config.headersFile === null ? {} : await _readHeaders(config.headersFile);
  // Loaded here only: with tracing off no OpenTelemetry module is evaluated (docs/operating.md).
  const { createOtelTracing } = await import("./otel.ts");
  return createOtelTracing(config, { warn, headers });
}

/** VESTIBULE_OTEL_HEADERS_FILE: private, `key=value` a line or comma; never shown in a message. */
async function _readHeaders(path: string): Promise<Record<string, string>> {
  const source = `VESTIBULE_OTEL_HEADERS_FILE=${JSON.stringify(path)}`;
  let text: string;
  try {
    await refuseOpenFile(path);
    text = await runtime.readTextFile(path);
  } catch (error) {
    if (error instanceof PrivateFileError) throw new StartupError(`${source}: ${error.message}`);
    throw new StartupError(`${source}: cannot read it: ${(error as Error).message}`);
  }
  return parseKeyValues(text, source);
}
