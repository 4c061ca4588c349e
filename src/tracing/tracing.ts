/**
 * The tracing seam: what the parts call to make spans, carry trace context and export audit
 * entries, whether tracing is on or not. With VESTIBULE_OTEL off every part holds NO_TRACING,
 * whose methods do nothing and allocate nothing, so the hot path pays one call; open.ts is the
 * one place that decides, and loads the OpenTelemetry SDK (otel.ts) only when it is on.
 */

export type SpanKind = "server" | "client" | "internal" | "producer" | "consumer";

/** Span attributes: names from OpenTelemetry's semantic conventions, values never secrets. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** W3C Trace Context as it travels: an HTTP request's headers, or an MCP message's `_meta`. */
export interface TraceCarrier {
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: SpanAttributes;
  /** A remote parent to continue (an agent's traceparent); the current span's otherwise. */
  readonly parent?: TraceCarrier | undefined;
  /** Earlier traces this work belongs to (an approved call links to the one that asked). */
  readonly links?: readonly TraceCarrier[];
}

/** The span being made, for what is known only once the work is under way. */
export interface ActiveSpan {
  set(attributes: SpanAttributes): void;
  /** Names the span once what it did is known (an HTTP request's route). */
  rename(name: string): void;
  /** Marks the span failed with a low-cardinality `error.type` (never a message with data). */
  fail(errorType: string): void;
}

/** An entry exported as an OpenTelemetry log record (the audit log). */
export interface LogRecordData {
  readonly time: number;
  readonly eventName: string;
  readonly body: string;
  readonly attributes: SpanAttributes;
}

export interface Tracing {
  readonly on: boolean;
  /** Runs `work` in a new span (child of `options.parent` or of the current one), ended after it. */
  span<T>(name: string, options: SpanOptions, work: (span: ActiveSpan) => Promise<T>): Promise<T>;
  /**
   * Sets attributes on the current span (the request's, when no part made its own); with
   * `errorType`, also marks it failed.
   */
  annotate(attributes: SpanAttributes, errorType?: string): void;
  /** The current span's context to send on (a `traceparent` whose parent is this process's span). */
  carrier(): TraceCarrier | null;
  /** The current span's ids for a log line. */
  ids(): { readonly traceId: string; readonly spanId: string } | null;
  /** Exports one log record, in the current trace when there is one. */
  emit(record: LogRecordData): void;
  /** Exports what is pending, within a bound, and stops. */
  shutdown(): Promise<void>;
}

const NO_SPAN: ActiveSpan = { set() {}, rename() {}, fail() {} };

/** Tracing off: nothing is recorded, nothing is loaded. */
export const NO_TRACING: Tracing = {
  on: false,
  span: (_name, _options, work) => work(NO_SPAN),
  annotate() {},
  carrier: () => null,
  ids: () => null,
  emit() {},
  shutdown: () => Promise.resolve(),
};

/** A W3C traceparent: version 00, 32 and 16 lowercase hex digits, flags; anything else is none. */
export const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A log sink whose JSON lines also carry the current `trace_id` and `span_id` (tracing on only:
 * with it off the sink is used as it is). Every line is one JSON object, so the ids go before its
 * closing brace.
 */
export function withTraceIds(
  log: (line: string) => void,
  tracing: Tracing,
): (line: string) => void {
  return (line) => {
    const ids = tracing.ids();
    if (ids === null || !line.endsWith("}")) return log(line);
    log(`${line.slice(0, -1)},"trace_id":"${ids.traceId}","span_id":"${ids.spanId}"}`);
  };
}
