/**
 * Tracing on: the official OpenTelemetry SDK behind the seam of tracing.ts. Loaded by open.ts only
 * when VESTIBULE_OTEL=on, so a server without tracing never fetches or loads these packages.
 *
 * Nothing here touches OpenTelemetry's process-wide globals (tracer provider, context manager,
 * propagator): each service gets its own, so two services in one process (tests, benchmarks)
 * keep apart. The current span travels with the async work through one AsyncLocalStorage.
 * Spans and audit records leave in batches, off the request's path; an export that fails or
 * hangs loses that batch, never delays an answer, and says so in one log line.
 */
import {
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type LogRecordExporter,
} from "@opentelemetry/sdk-logs";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPLogExporter as ProtobufLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import type { OtelConfig } from "../config/otel.ts";
import type { SpanAttributes, SpanKind, TraceCarrier, Tracing } from "./tracing.ts";

const KINDS: Record<SpanKind, OtelSpanKind> = {
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
  internal: OtelSpanKind.INTERNAL,
  producer: OtelSpanKind.PRODUCER,
  consumer: OtelSpanKind.CONSUMER,
};

/** An export waits this long for the collector; the batch is dropped after it. */
const EXPORT_TIMEOUT_MS = 10_000;
/** At shutdown, pending spans get this long to leave. */
const SHUTDOWN_WAIT_MS = 3_000;
/** Spans leave at least this often: well within the 15 s a collector may wait for them. */
const EXPORT_DELAY_MS = 2_000;

export interface OtelDeps {
  /** One line when exports start failing (`level`, `message`, `signal`, `error`). */
  readonly warn: (fields: Record<string, unknown>) => void;
  /** Extra headers (the headers file's), merged over OTEL_EXPORTER_OTLP_HEADERS. */
  readonly headers: Readonly<Record<string, string>>;
}

export function createOtelTracing(config: OtelConfig, deps: OtelDeps): Tracing {
  const resource = resourceFromAttributes({
    ...config.resourceAttributes,
    "service.name": config.serviceName,
  });
  const headers = { ...config.headers, ...deps.headers };
  const options = (signal: string) => ({
    url: `${config.endpoint}/v1/${signal}`,
    headers,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const json = config.protocol === "http/json";
  const spanExporter = _reportingFailures(
    json ? new JsonTraceExporter(options("traces")) : new ProtobufTraceExporter(options("traces")),
    "spans",
    deps.warn,
  );
  const logExporter = _reportingFailures(
    json ? new JsonLogExporter(options("logs")) : new ProtobufLogExporter(options("logs")),
    "log records",
    deps.warn,
  );
  const batch = { scheduledDelayMillis: EXPORT_DELAY_MS, exportTimeoutMillis: EXPORT_TIMEOUT_MS };
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: spanExporter, ...batch })],
  });
  const loggers = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: logExporter, ...batch })],
  });
  const tracer = provider.getTracer("vestibule");
  const logger = loggers.getLogger("vestibule.audit");
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  const extract = (carrier: TraceCarrier): Context =>
    propagator.extract(ROOT_CONTEXT, carrier, {
      get: (c, key) => (c as Record<string, string | undefined>)[key],
      keys: (c) => Object.keys(c),
    });
  const current = (): Span | undefined => trace.getSpan(contexts.active());

  return {
    on: true,
    span(name, options, work) {
      // A remote parent continues the caller's trace; a malformed one is ignored, not a new root.
      const remote = options.parent?.traceparent ? extract(options.parent) : undefined;
      const parent = remote !== undefined && trace.getSpanContext(remote) !== undefined
        ? remote
        : contexts.active();
      const links: Link[] = [];
      for (const carrier of options.links ?? []) {
        const linked = trace.getSpanContext(extract(carrier));
        if (linked !== undefined) links.push({ context: linked });
      }
      const span = tracer.startSpan(name, {
        kind: KINDS[options.kind ?? "internal"],
        attributes: _defined(options.attributes),
        links,
      }, parent);
      const active = {
        set: (attributes: SpanAttributes) => span.setAttributes(_defined(attributes)),
        rename: (name: string) => span.updateName(name),
        fail: (errorType: string) => {
          span.setAttribute("error.type", errorType);
          span.setStatus({ code: SpanStatusCode.ERROR });
        },
      };
      return contexts.with(trace.setSpan(parent, span), async () => {
        try {
          return await work(active);
        } catch (error) {
          active.fail(error instanceof Error ? error.name : "unknown");
          throw error;
        } finally {
          span.end();
        }
      });
    },
    annotate(attributes, errorType) {
      const span = current();
      span?.setAttributes(_defined(attributes));
      if (errorType !== undefined) {
        span?.setAttribute("error.type", errorType);
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
    },
    carrier() {
      const carrier: Record<string, string> = {};
      propagator.inject(contexts.active(), carrier, {
        set: (c, key, value) => (c as Record<string, string>)[key] = value,
      });
      return carrier.traceparent === undefined ? null : carrier;
    },
    ids() {
      const context = current()?.spanContext();
      return context === undefined ? null : { traceId: context.traceId, spanId: context.spanId };
    },
    emit(record) {
      logger.emit({
        timestamp: record.time,
        eventName: record.eventName,
        body: record.body,
        attributes: _defined(record.attributes),
        context: contexts.active(),
      });
    },
    async shutdown() {
      contexts.disable();
      // What is pending goes out, but a collector that never answers does not hold the exit.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([provider.shutdown(), loggers.shutdown()]),
        new Promise((resolve) => timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)),
      ]);
      clearTimeout(timer);
    },
  };
}

/** Attributes without the undefined ones (a part sets what it knows). */
function _defined(
  attributes: SpanAttributes | undefined,
): Record<string, string | number | boolean> {
  const defined: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value !== undefined) defined[name] = value;
  }
  return defined;
}

/**
 * The exporter, telling the operator once when its exports start failing (an unreachable
 * collector, one that never answers, a refused key) and once when they succeed again: a line per
 * batch would flood the log in an outage.
 */
function _reportingFailures<T extends SpanExporter | LogRecordExporter>(
  exporter: T,
  signal: string,
  warn: OtelDeps["warn"],
): T {
  let failing = false;
  const original = exporter.export.bind(exporter) as (
    items: never[],
    done: (result: { code: ExportResultCode; error?: Error }) => void,
  ) => void;
  (exporter as { export: typeof original }).export = (items, done) =>
    original(items, (result) => {
      if (result.code !== ExportResultCode.SUCCESS && !failing) {
        failing = true;
        warn({
          level: "warn",
          message: `OpenTelemetry export failed: ${signal} are dropped until the collector answers`,
          signal,
          error: result.error?.message ?? "unknown",
        });
      } else if (result.code === ExportResultCode.SUCCESS && failing) {
        failing = false;
        warn({ level: "info", message: `OpenTelemetry export works again: ${signal} are sent` });
      }
      done(result);
    });
  return exporter;
}
