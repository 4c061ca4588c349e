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
// Types only, erased before the code runs: the values come through loadPackage, which Deno
// cannot follow before run time (src/tracing/packages.ts says why). Same versions as that table.
import type * as Api from "npm:@opentelemetry/api@1.10.0";
import type * as Hooks from "npm:@opentelemetry/context-async-hooks@3.1.0";
import type * as Core from "npm:@opentelemetry/core@3.1.0";
import type * as Resources from "npm:@opentelemetry/resources@3.1.0";
import type * as SdkTrace from "npm:@opentelemetry/sdk-trace@3.1.0";
import type * as SdkLogs from "npm:@opentelemetry/sdk-logs@3.1.0";
import type * as TraceProto from "npm:@opentelemetry/exporter-trace-otlp-proto@0.301.0";
import type * as TraceJson from "npm:@opentelemetry/exporter-trace-otlp-http@0.301.0";
import type * as LogsProto from "npm:@opentelemetry/exporter-logs-otlp-proto@0.301.0";
import type * as LogsJson from "npm:@opentelemetry/exporter-logs-otlp-http@0.301.0";
import { runtime } from "../runtime/current.ts";
import { OTEL_PACKAGES, type OtelPackage } from "./packages.ts";
import type { OtelConfig } from "../config/otel.ts";
import type { SpanAttributes, SpanKind, TraceCarrier, Tracing } from "./tracing.ts";

interface Modules {
  "@opentelemetry/api": typeof Api;
  "@opentelemetry/context-async-hooks": typeof Hooks;
  "@opentelemetry/core": typeof Core;
  "@opentelemetry/resources": typeof Resources;
  "@opentelemetry/sdk-trace": typeof SdkTrace;
  "@opentelemetry/sdk-logs": typeof SdkLogs;
  "@opentelemetry/exporter-trace-otlp-proto": typeof TraceProto;
  "@opentelemetry/exporter-trace-otlp-http": typeof TraceJson;
  "@opentelemetry/exporter-logs-otlp-proto": typeof LogsProto;
  "@opentelemetry/exporter-logs-otlp-http": typeof LogsJson;
}

function loadPackage<N extends OtelPackage>(name: N): Promise<Modules[N]> {
  return runtime.importPackage(name, OTEL_PACKAGES[name]) as Promise<Modules[N]>;
}

const [api, hooks, core, resources, sdkTrace, sdkLogs, traceProto, traceJson, logsProto, logsJson] =
  await Promise.all([
    loadPackage("@opentelemetry/api"),
    loadPackage("@opentelemetry/context-async-hooks"),
    loadPackage("@opentelemetry/core"),
    loadPackage("@opentelemetry/resources"),
    loadPackage("@opentelemetry/sdk-trace"),
    loadPackage("@opentelemetry/sdk-logs"),
    loadPackage("@opentelemetry/exporter-trace-otlp-proto"),
    loadPackage("@opentelemetry/exporter-trace-otlp-http"),
    loadPackage("@opentelemetry/exporter-logs-otlp-proto"),
    loadPackage("@opentelemetry/exporter-logs-otlp-http"),
  ]);
const { ROOT_CONTEXT, SpanKind: OtelSpanKind, SpanStatusCode, trace } = api;
const { AsyncLocalStorageContextManager } = hooks;
const { ExportResultCode, W3CTraceContextPropagator } = core;
const { resourceFromAttributes } = resources;
const { BatchSpanProcessor, TracerProvider } = sdkTrace;
const { BatchLogRecordProcessor, LoggerProvider } = sdkLogs;
const { OTLPTraceExporter: ProtobufTraceExporter } = traceProto;
const { OTLPTraceExporter: JsonTraceExporter } = traceJson;
const { OTLPLogExporter: ProtobufLogExporter } = logsProto;
const { OTLPLogExporter: JsonLogExporter } = logsJson;
type Context = Api.Context;
type Link = Api.Link;
type Span = Api.Span;
type SpanExporter = SdkTrace.SpanExporter;
type LogRecordExporter = SdkLogs.LogRecordExporter;

const KINDS: Record<SpanKind, Api.SpanKind> = {
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
    done: (result: { code: Core.ExportResultCode; error?: Error }) => void,
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
