import assert from "node:assert/strict";
import { SCOPE_MEANINGS } from "../../src/oauth/scopes.ts";
import { buildOpenApiDocument, openApiText } from "../../src/content/openapi.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
const document: Json = buildOpenApiDocument();
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] }))
  );
}

function op(path: string, method = "get"): Json {
  const found = document.paths[path]?.[method];
  assert.ok(found, `${method.toUpperCase()} ${path} is described`);
  return found;
}

Deno.test("static/openapi.json is exactly what `deno task openapi` writes", async () => {
  const committed = await Deno.readTextFile(new URL("../../static/openapi.json", import.meta.url));
  assert.ok(
    committed === openApiText(),
    "static/openapi.json is stale: run `deno task openapi` and commit the result",
  );
});

Deno.test("OpenAPI 3.1.1, version 1.0.0, with the component schemas of spec §2", () => {
  assert.equal(document.openapi, "3.1.1");
  assert.equal(document.info.version, "1.0.0");
  for (
    const name of [
      "Health",
      "PageDocument",
      "Block",
      "Inline",
      "ProtectedResource",
      "OAuthError",
      "ListToolsRequest",
      "ListToolsResponse",
      "Tool",
      "RpcError",
    ]
  ) assert.ok(document.components.schemas[name], name);
});

Deno.test("every operation has a unique id, a description and a response schema", () => {
  const ids = operations().map(({ op }) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, `duplicate operation ids in ${ids}`);
  for (const { path, method, op } of operations()) {
    const where = `${method} ${path}`;
    assert.match(op.operationId ?? "", /^[a-z][A-Za-z]+$/, where);
    assert.ok(typeof op.description === "string" && op.description.length > 20, where);
    const schemas = Object.values(op.responses as Record<string, Json>)
      .flatMap((r) => Object.values(r.content ?? {}) as Json[])
      .filter((media) => media.schema);
    assert.ok(schemas.length > 0, `${where} has a response schema`);
  }
});

Deno.test("every operation of spec §4 is present, on its host", () => {
  const server = (o: Json) => (o.servers ?? document.servers).map((s: Json) => s.url);
  const cases = [
    ["getWebsiteHealth", "/health", "get", ["{base_url}"]],
    ["getAgentInstructions", "/llms.txt", "get", ["{base_url}", "{auth_url}"]],
    ["getProductOverview", "/index.json", "get", ["{base_url}"]],
    ["getDeveloperDocumentation", "/developers.json", "get", ["{base_url}"]],
    [undefined, "/openapi.json", "get", ["{base_url}"]],
    ["getWorkspacePermissions", "/.well-known/oauth-protected-resource", "get", ["{api_url}"]],
    ["listOnboardingTools", "/mcp", "post", ["{auth_url}"]],
    ["listWorkspaceTools", "/api/mcp", "post", ["{api_url}"]],
  ] as const;
  for (const [id, path, method, servers] of cases) {
    const o = op(path, method);
    if (id) assert.equal(o.operationId, id);
    assert.deepEqual(server(o), servers, `${path} servers`);
  }
  const llms = op("/llms.txt").servers.map((s: Json) => s.description);
  assert.ok(llms.every((d: string) => d.length > 0), "each /llms.txt host says what it returns");
});

Deno.test("the responses of the public reads carry the right schemas", () => {
  const schema = (path: string) => op(path).responses["200"].content;
  assert.equal(schema("/health")["application/json"].schema.$ref, "#/components/schemas/Health");
  assert.equal(
    schema("/index.json")["application/json"].schema.$ref,
    "#/components/schemas/PageDocument",
  );
  assert.equal(
    schema("/.well-known/oauth-protected-resource")["application/json"].schema.$ref,
    "#/components/schemas/ProtectedResource",
  );
  assert.equal(schema("/llms.txt")["text/plain"].schema.type, "string");
});

Deno.test("the MCP operations: requests, JSON and SSE answers, and error statuses", async (t) => {
  for (const path of ["/mcp", "/api/mcp"]) {
    await t.step(path, () => {
      const post = op(path, "post");
      const body = post.requestBody.content["application/json"].schema.oneOf.map((s: Json) =>
        s.$ref
      );
      assert.deepEqual(body, [
        "#/components/schemas/InitializeRequest",
        "#/components/schemas/InitializedNotification",
        "#/components/schemas/ListToolsRequest",
        "#/components/schemas/DiscoverRequest",
        "#/components/schemas/ListToolsRequest.2026-07-28",
      ]);
      const ok = post.responses["200"].content;
      const answers = ok["application/json"].schema.oneOf.map((s: Json) => s.$ref);
      assert.ok(answers.includes("#/components/schemas/ListToolsResponse"));
      assert.ok(answers.includes("#/components/schemas/DiscoverResponse"));
      assert.ok(answers.includes("#/components/schemas/RpcError"));
      assert.ok(ok["text/event-stream"]);
      for (const status of ["403", "404", "413", "429"]) assert.ok(post.responses[status], status);
      assert.ok(post.responses["429"].headers["Retry-After"]);
      const get = op(path, "get");
      assert.ok(get.responses["405"].headers.Allow);
      const version = post.parameters.find((p: Json) => p.name === "MCP-Protocol-Version");
      assert.deepEqual(version.schema.enum, ["2026-07-28", "2025-11-25", "2025-06-18"]);
      for (const name of ["Mcp-Method", "Mcp-Name"]) {
        assert.ok(post.parameters.some((p: Json) => p.name === name), name);
      }
      assert.match(post.description, /MCP 2026-07-28, the version a new client should use/);
    });
  }
  await t.step("onboarding: empty security, no 401", () => {
    assert.deepEqual(op("/mcp", "post").security, []);
    assert.equal(op("/mcp", "post").responses["401"], undefined);
  });
  await t.step("workspace: oauth2 app.access, 401 with WWW-Authenticate and OAuthError", () => {
    const post = op("/api/mcp", "post");
    assert.deepEqual(post.security, [{ oauth2: ["app.access"] }]);
    const unauthorized = post.responses["401"];
    assert.ok(unauthorized.headers["WWW-Authenticate"].required);
    assert.equal(
      unauthorized.content["application/json"].schema.$ref,
      "#/components/schemas/OAuthError",
    );
  });
});

Deno.test("the oauth2 scheme: authorization code, both endpoints, every scope of spec §5", () => {
  const scheme = document.components.securitySchemes.oauth2;
  assert.equal(scheme.type, "oauth2");
  const flow = scheme.flows.authorizationCode;
  assert.equal(flow.authorizationUrl, "{auth_url}/api/auth/oauth2/authorize");
  assert.equal(flow.tokenUrl, "{auth_url}/api/auth/oauth2/token");
  assert.deepEqual(flow.scopes, { ...SCOPE_MEANINGS });
  assert.equal(Object.keys(flow.scopes).length, 25);
});

Deno.test("every $ref resolves inside the document", () => {
  const refs: string[] = [];
  const walk = (node: Json) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === "object") {
      if (typeof node.$ref === "string") refs.push(node.$ref);
      Object.values(node).forEach(walk);
    }
  };
  walk(document);
  assert.ok(refs.length > 10);
  for (const ref of refs) {
    const target = ref.replace(/^#\//, "").split("/").reduce(
      (node: Json, key) => node?.[key],
      document,
    );
    assert.ok(target, `${ref} resolves`);
  }
});
