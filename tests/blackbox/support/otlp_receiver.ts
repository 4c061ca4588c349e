// A small OTLP/HTTP receiver for the tracing tests: accepts http/protobuf and http/json on
// /v1/traces and /v1/logs, decodes either into one shape, and keeps every raw byte it was sent
// (a test searches them for secrets). Protobuf is decoded with protobufjs, from the message
// definitions of opentelemetry-proto (trace, logs, common, resource) written below as the
// schema says: the official JS packages no longer ship the .proto files.
// deno-lint-ignore-file no-explicit-any -- decoded OTLP is arbitrary JSON the tests pick apart
import protobuf from "npm:protobufjs@8.8.1";

const SCHEMA = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1; string version = 2; repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message Status { string message = 2; int32 code = 3; }
message Event {
  fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Link {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4;
  uint32 dropped_attributes_count = 5; fixed32 flags = 6;
}
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  fixed32 flags = 16; string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10; repeated Event events = 11;
  uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14;
  Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message LogRecord {
  fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11; int32 severity_number = 2;
  string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7; fixed32 flags = 8; bytes trace_id = 9; bytes span_id = 10;
  string event_name = 12;
}
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: false }).root;
const TRACES = root.lookupType("otlp.ExportTraceServiceRequest");
const LOGS = root.lookupType("otlp.ExportLogsServiceRequest");

/** One exported span, flattened: ids in lowercase hex, attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly links: { traceId: string; spanId: string }[];
  readonly statusCode: number;
  readonly resource: Record<string, unknown>;
}

export interface ReceivedLog {
  readonly traceId: string;
  readonly spanId: string;
  readonly eventName: string;
  readonly body: unknown;
  readonly attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly logs: ReceivedLog[];
  /** Every request body as received, and the content types seen. */
  readonly raw: Uint8Array[];
  readonly contentTypes: Set<string>;
  /** Each export's request headers. */
  readonly headers: Headers[];
  close(): Promise<void>;
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const raw: Uint8Array[] = [];
  const contentTypes = new Set<string>();
  const headers: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const body = new Uint8Array(await request.arrayBuffer());
    if (request.method !== "POST" || !["/v1/traces", "/v1/logs"].includes(path)) {
      return new Response("not found", { status: 404 });
    }
    raw.push(body);
    headers.push(request.headers);
    contentTypes.add(type);
    const json = type === "application/json";
    if (!json && type !== "application/x-protobuf") {
      return new Response("unsupported media type", { status: 415 });
    }
    const decoded: any = json
      ? JSON.parse(new TextDecoder().decode(body))
      : (path === "/v1/traces" ? TRACES : LOGS).toObject(
        (path === "/v1/traces" ? TRACES : LOGS).decode(body),
        { longs: String, bytes: Array, defaults: true },
      );
    if (path === "/v1/traces") spans.push(...flattenSpans(decoded, json));
    else logs.push(...flattenLogs(decoded, json));
    return new Response(json ? "{}" : new Uint8Array(), {
      headers: { "content-type": json ? "application/json" : "application/x-protobuf" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    logs,
    raw,
    contentTypes,
    headers,
    close: () => server.shutdown(),
  };
}

/** OTLP/JSON writes ids as hex strings; protobuf as bytes. */
function hexId(value: unknown, json: boolean): string {
  if (json) return typeof value === "string" ? value.toLowerCase() : "";
  const bytes = value as number[] | undefined;
  return bytes === undefined ? "" : bytes.map((b) => b.toString(16).padStart(2, "0")).join("");
}

function anyValue(value: any): unknown {
  if (value === null || value === undefined) return undefined;
  const key = Object.keys(value).find((k) => value[k] !== undefined && value[k] !== null);
  if (key === undefined) return undefined;
  if (key === "arrayValue") return (value.arrayValue.values ?? []).map(anyValue);
  if (key === "kvlistValue") return attributes(value.kvlistValue.values);
  if (key === "intValue") return Number(value.intValue);
  return value[key];
}

function attributes(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = anyValue(kv.value);
  return out;
}

function flattenSpans(request: any, json: boolean): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hexId(s.traceId, json),
          spanId: hexId(s.spanId, json),
          parentSpanId: hexId(s.parentSpanId, json),
          name: s.name,
          kind: Number(s.kind),
          attributes: attributes(s.attributes),
          links: (s.links ?? []).map((l: any) => ({
            traceId: hexId(l.traceId, json),
            spanId: hexId(l.spanId, json),
          })),
          statusCode: Number(s.status?.code ?? 0),
          resource,
        });
      }
    }
  }
  return out;
}

function flattenLogs(request: any, json: boolean): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rl of request.resourceLogs ?? []) {
    for (const sl of rl.scopeLogs ?? []) {
      for (const l of sl.logRecords ?? []) {
        out.push({
          traceId: hexId(l.traceId, json),
          spanId: hexId(l.spanId, json),
          eventName: l.eventName ?? "",
          body: anyValue(l.body),
          attributes: attributes(l.attributes),
        });
      }
    }
  }
  return out;
}
