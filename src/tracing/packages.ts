/**
 * The OpenTelemetry packages tracing loads, pinned: the one table otel.ts imports them by. They
 * are deliberately absent from deno.json's import map and are package.json optionalDependencies
 * (tests/tracing_packages_test.ts checks both against this table): Deno downloads every package
 * either names at the first `deno task start`, and a server with tracing off must fetch none of
 * them. On Deno they are fetched at the first start with VESTIBULE_OTEL=on (docs/operating.md).
 */
export const OTEL_PACKAGES = {
  "@opentelemetry/api": "1.10.0",
  "@opentelemetry/context-async-hooks": "3.1.0",
  "@opentelemetry/core": "3.1.0",
  "@opentelemetry/exporter-logs-otlp-http": "0.301.0",
  "@opentelemetry/exporter-logs-otlp-proto": "0.301.0",
  "@opentelemetry/exporter-trace-otlp-http": "0.301.0",
  "@opentelemetry/exporter-trace-otlp-proto": "0.301.0",
  "@opentelemetry/resources": "3.1.0",
  "@opentelemetry/sdk-logs": "3.1.0",
  "@opentelemetry/sdk-trace": "3.1.0",
} as const;

export type OtelPackage = keyof typeof OTEL_PACKAGES;
