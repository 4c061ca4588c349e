import assert from "node:assert/strict";
import SwaggerParser from "npm:@apidevtools/swagger-parser@^13.1.0";
import { OPERATIONS } from "../../src/operator/operator_api.ts";
import { buildOperatorOpenApi } from "../../src/operator/operator_openapi.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
const document: Json = buildOperatorOpenApi();
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function described(): { path: string; method: string; op: Json }[] {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] }))
  );
}

Deno.test("operator OpenAPI: a valid OpenAPI 3.1 document (a validator nobody here wrote)", async () => {
  assert.equal(document.openapi, "3.1.1");
  // Validates against the OpenAPI 3.1 JSON Schema and resolves every $ref.
  await SwaggerParser.validate(structuredClone(document));
});

Deno.test("operator OpenAPI: every route the server serves is described, and nothing else", () => {
  const served = OPERATIONS.map((o) => `${o.method.toLowerCase()} ${o.path} ${o.operationId}`);
  const doc = described().map(({ path, method, op }) => `${method} ${path} ${op.operationId}`);
  assert.deepEqual(doc.sort(), served.sort());
  for (
    const [id, method, path] of [
      ["updateWorkflowRun", "patch", "/v1/businesses/{businessId}/workflow-runs/{runId}"],
      ["getWorkflowRun", "get", "/v1/businesses/{businessId}/workflow-runs/{runId}"],
      ["updateConnection", "patch", "/v1/businesses/{businessId}/connections/{connectionId}"],
      ["replaceCatalogue", "put", "/v1/businesses/{businessId}/catalogue"],
    ]
  ) assert.equal(document.paths[path!]?.[method!]?.operationId, id, "the contract's names");
});

Deno.test("operator OpenAPI: request bodies, responses, path parameters and the bearer scheme", () => {
  const schemas = document.components.schemas;
  assert.deepEqual(document.components.securitySchemes.operatorToken, {
    type: "http",
    scheme: "bearer",
    description: "The token in VESTIBULE_ADMIN_TOKEN_FILE, as `Authorization: Bearer <token>`.",
  });
  assert.deepEqual(document.security, [{ operatorToken: [] }]);
  for (const { path, method, op } of described()) {
    const where = `${method} ${path}`;
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    assert.deepEqual(
      op.parameters.map((p: Json) => [p.name, p.in, p.required]),
      names.map((n) => [n, "path", true]),
      where,
    );
    const ref = (media: Json) => media.content["application/json"].schema.$ref.split("/").pop();
    assert.ok(schemas[ref(op.responses["200"])], `${where}: 200 schema`);
    for (const status of ["401", "404"]) {
      assert.equal(ref(op.responses[status]), "OperatorError", where);
    }
    assert.match(op.responses["401"].headers["WWW-Authenticate"].description, /Bearer/);
    if (method === "get") {
      assert.equal(op.requestBody, undefined, where);
      continue;
    }
    assert.equal(op.requestBody.required, true, where);
    assert.ok(schemas[ref(op.requestBody)], `${where}: body schema`);
    for (const status of ["400", "413", "415"]) {
      assert.ok(op.responses[status], `${where} ${status}`);
    }
  }
  // The body schemas are the parsing schemas: the contract's fields and limits.
  const run = schemas.WorkflowRunUpdate;
  assert.deepEqual(run.required, ["status"]);
  assert.deepEqual(run.properties.status.enum, ["running", "succeeded", "failed"]);
  assert.equal(run.properties.result.maxLength, 4096);
  assert.equal(run.additionalProperties, false);
  assert.deepEqual(schemas.CatalogueReplacement.required, [
    "workflows",
    "triggers",
    "packs",
    "billing",
  ]);
  for (const field of ["result", "costCents", "updatedAt"]) {
    assert.ok(schemas.WorkflowRun.properties[field], `WorkflowRun.${field}`);
  }
  assert.ok(
    document.paths["/v1/businesses/{businessId}/workflow-runs/{runId}"].patch.responses["409"],
    "a finished run is a 409",
  );
});
