import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { ConfigError } from "../../src/config/settings.ts";

Deno.test("tracing is off unless VESTIBULE_OTEL=on, and then takes the standard OTEL_* variables", () => {
  assert.equal(resolveConfig({}).otel, null);
  assert.deepEqual(resolveConfig({ VESTIBULE_OTEL: "on" }).otel, {
    endpoint: "http://localhost:4318",
    protocol: "http/protobuf",
    headers: {},
    headersFile: null,
    serviceName: "vestibule",
    resourceAttributes: {},
  });
  assert.deepEqual(
    resolveConfig({
      VESTIBULE_OTEL: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme,x-note=a%20b",
      OTEL_SERVICE_NAME: "gateway-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      VESTIBULE_OTEL_HEADERS_FILE: "/etc/vestibule/otel-headers",
    }).otel,
    {
      endpoint: "https://collector.example:4318",
      protocol: "http/json",
      headers: { "x-tenant": "acme", "x-note": "a b" },
      headersFile: "/etc/vestibule/otel-headers",
      serviceName: "gateway-eu",
      resourceAttributes: { "deployment.environment": "prod" },
    },
  );
});

Deno.test("a bad tracing setting stops start-up with one line naming it, never a header's value", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      /OTEL_EXPORTER_OTLP_PROTOCOL="grpc": must be http\/protobuf or http\/json/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": must be an http\(s\) base URL/,
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: "api-key" },
      /OTEL_EXPORTER_OTLP_HEADERS: each entry must be key=value/,
    ],
    [
      { OTEL_EXPORTER_OTLP_HEADERS: "api-key=secret%zz" },
      /OTEL_EXPORTER_OTLP_HEADERS: the value of api-key is not valid/,
    ],
    [{ VESTIBULE_OTEL: "maybe" }, /VESTIBULE_OTEL="maybe"/],
  ];
  for (const [env, message] of cases) {
    const error = assert.throws(
      () => resolveConfig({ VESTIBULE_OTEL: "on", ...env }),
      (e: unknown) =>
        e instanceof ConfigError && message.test(e.message) && !e.message.includes("secret"),
    );
    void error;
  }
  assert.throws(
    () => resolveConfig({ VESTIBULE_OTEL_HEADERS_FILE: "/etc/h" }),
    /VESTIBULE_OTEL_HEADERS_FILE needs VESTIBULE_OTEL=on/,
  );
});
