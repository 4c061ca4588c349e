// The operator API on the real operator listener: the business's systems report runs and
// connections, and an agent then reads exactly that through the workspace tools; bad input is
// a precise 4xx, nothing is half-applied, everything is audited. The catalogue is in
// operator_catalogue_test.ts.
import assert from "node:assert/strict";
import { buildOperatorOpenApi } from "../../../src/operator/operator_openapi.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import type { Run } from "../../../src/workspace/domain/records.ts";
import type { WorkspaceServer } from "../support/workspace_support.ts";
import { CATALOGUE, type Json, startOperatorServer, TOKEN } from "./operator_api_support.ts";

function queuedRun(id: string): Run {
  return {
    id,
    workflowId: "wf-1",
    status: "queued",
    startedAt: 1_000,
    finishedAt: null,
    approvedBy: null,
    gateId: "gate-1",
    result: null,
    costCents: null,
    updatedAt: 1_000,
  };
}

const RUN_PATH = (ws: WorkspaceServer, runId: string) =>
  `/v1/businesses/${ws.businessId}/workflow-runs/${runId}`;

Deno.test("operator API: the bearer token, compared whole; off without a token file", async (t) => {
  const op = await startOperatorServer();
  try {
    await op.workspace.runs.put(op.businessId, queuedRun("run-1"));
    const path = RUN_PATH(op, "run-1");
    const cases: [string, Record<string, string>, string][] = [
      ["no token", { Authorization: "" }, "Bearer"],
      ["another scheme", { Authorization: `Basic ${TOKEN}` }, "Bearer"],
      ["a wrong token", { Authorization: `Bearer ${TOKEN}x` }, 'Bearer error="invalid_token"'],
      [
        "a prefix of it",
        { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
        'Bearer error="invalid_token"',
      ],
    ];
    for (const [name, headers, challenge] of cases) {
      await t.step(`${name}: 401 with WWW-Authenticate, nothing changed`, async () => {
        const answer = await op.api("PATCH", path, { status: "running" }, headers);
        assert.equal(answer.status, 401);
        assert.equal(answer.headers.get("WWW-Authenticate"), challenge);
        assert.equal(answer.json.error, "unauthorized");
        assert.ok(!JSON.stringify(answer.json).includes(TOKEN), "the token is never echoed");
        assert.equal((await op.workspace.runs.get(op.businessId, "run-1"))!.value.status, "queued");
      });
    }
    await t.step("unknown /v1 paths need the token too, then 404; wrong method 405", async () => {
      const unknown = await op.api("GET", "/v1/nothing", undefined, { Authorization: "" });
      assert.equal(unknown.status, 401);
      const known = await op.api("GET", "/v1/nothing");
      assert.equal(known.status, 404);
      assert.equal(known.json.error, "not_found");
      const method = await op.api("DELETE", path);
      assert.equal(method.status, 405);
      assert.equal(method.headers.get("Allow"), "GET, HEAD, PATCH, OPTIONS");
    });
    await t.step("every operation /openapi.json describes is served there", async () => {
      const response = await fetch(`${op.adminUrl}/openapi.json`);
      assert.equal(response.status, 200);
      const document = await response.json();
      assert.deepEqual(document, buildOperatorOpenApi());
      for (const [template, item] of Object.entries(document.paths as Record<string, Json>)) {
        const where = template.replace(/\{\w+\}/g, "unknown");
        for (const method of Object.keys(item)) {
          const answer = await op.api(
            method.toUpperCase(),
            where,
            method === "get" ? undefined : {},
          );
          assert.ok(answer.status !== 405 && answer.json.error !== "method_not_allowed", where);
          assert.ok(!answer.json.message.startsWith("no operation"), `${method} ${where}`);
        }
      }
    });
    await t.step("/metrics, /ready and /openapi.json need no token", async () => {
      for (const route of ["/metrics", "/ready", "/openapi.json"]) {
        const response = await fetch(`${op.adminUrl}${route}`);
        await response.body?.cancel();
        assert.equal(response.status, 200, route);
      }
    });
  } finally {
    await op.close();
  }

  const off = await startOperatorServer(false);
  try {
    await t.step(
      "no VESTIBULE_ADMIN_TOKEN_FILE: every /v1 route is 404, the API is off",
      async () => {
        await off.workspace.runs.put(off.businessId, queuedRun("run-1"));
        const answer = await off.api("PATCH", RUN_PATH(off, "run-1"), { status: "running" });
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, {
          error: "not_found",
          message: "the operator API is off: set VESTIBULE_ADMIN_TOKEN_FILE to turn it on",
        });
        assert.equal(
          (await off.workspace.runs.get(off.businessId, "run-1"))!.value.status,
          "queued",
        );
      },
    );
  } finally {
    await off.close();
  }
});

Deno.test("updateWorkflowRun: queued → running → succeeded, and the agent sees each state", async (t) => {
  const op = await startOperatorServer();
  try {
    await op.workspace.runs.put(op.businessId, queuedRun("run-1"));
    const path = RUN_PATH(op, "run-1");
    const agentRun = async () => {
      const { runs } = await op.agentReads("list_workflow_runs");
      return runs.find((r: Run) => r.id === "run-1");
    };

    await t.step("running: 200 with the run, updatedAt stamped", async () => {
      const before = Date.now();
      const answer = await op.api("PATCH", path, { status: "running" });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.equal(answer.json.status, "running");
      assert.equal(answer.json.finishedAt, null);
      assert.ok(answer.json.updatedAt >= before);
      assert.equal(answer.headers.get("Cache-Control"), "no-store");
      assert.deepEqual(await agentRun(), answer.json);
    });
    let finished: Run;
    await t.step("succeeded with result and cost: final, the agent reads it", async () => {
      const answer = await op.api("PATCH", path, {
        status: "succeeded",
        result: "Refunded order #4411",
        costCents: 40,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      finished = answer.json;
      assert.equal(finished.status, "succeeded");
      assert.equal(finished.result, "Refunded order #4411");
      assert.equal(finished.costCents, 40);
      assert.ok(finished.finishedAt !== null);
      assert.deepEqual(await agentRun(), finished);
      assert.deepEqual((await op.api("GET", path)).json, finished, "getWorkflowRun reads it");
    });
    await t.step("the same final report again: 200, idempotent, nothing rewritten", async () => {
      const again = await op.api("PATCH", path, { status: "succeeded", costCents: 40 });
      assert.equal(again.status, 200);
      assert.deepEqual(again.json, finished);
    });
    for (
      const [name, body] of [
        ["another status", { status: "failed" }],
        ["back to running", { status: "running" }],
        ["another result", { status: "succeeded", result: "something else" }],
        ["another cost", { status: "succeeded", costCents: 41 }],
      ] as const
    ) {
      await t.step(`a finished run does not change (${name}): 409`, async () => {
        const answer = await op.api("PATCH", path, body);
        assert.equal(answer.status, 409);
        assert.deepEqual(answer.json, {
          error: "conflict",
          message: 'workflow run "run-1" already succeeded: a finished run does not change',
        });
        assert.deepEqual(await agentRun(), finished);
      });
    }
    await t.step("each change is audited as the operator's, once", async () => {
      const entries = await createAuditLog(op.server.store, Date.now).list(op.businessId);
      const runs = entries.filter((e) => e.action === "updateWorkflowRun");
      assert.deepEqual(
        runs.map((e) => [e.actor, e.accountId, e.clientId, e.gateId, e.summary]),
        [
          [
            "operator",
            null,
            null,
            "gate-1",
            "Workflow run run-1 of wf-1: running → succeeded; cost $0.40; result recorded",
          ],
          ["operator", null, null, "gate-1", "Workflow run run-1 of wf-1: queued → running"],
        ],
      );
    });
  } finally {
    await op.close();
  }
});

Deno.test("operator API: a bad field is a 400 naming it; unknown ids are 404", async (t) => {
  const op = await startOperatorServer();
  try {
    await op.workspace.runs.put(op.businessId, queuedRun("run-1"));
    const path = RUN_PATH(op, "run-1");
    const cases: [string, unknown, number, RegExp][] = [
      [
        "an unknown status",
        { status: "done" },
        400,
        /^"status": must be running, succeeded or failed$/,
      ],
      ["no status", { result: "x" }, 400, /^"status": is required$/],
      [
        "a result too long",
        { status: "running", result: "x".repeat(4097) },
        400,
        /^"result": must be at most 4096 characters$/,
      ],
      [
        "a negative cost",
        { status: "running", costCents: -1 },
        400,
        /^"costCents": must be 0 or more$/,
      ],
      [
        "a fractional cost",
        { status: "running", costCents: 0.5 },
        400,
        /^"costCents": must be a whole number$/,
      ],
      [
        "an unknown field",
        { status: "running", stauts: "x" },
        400,
        /^"stauts": is not a field of this body$/,
      ],
      ["not an object", [], 400, /^the body must be a JSON object$/],
      ["not JSON", "{status:", 400, /^the body is not valid UTF-8 JSON$/],
    ];
    for (const [name, body, status, message] of cases) {
      await t.step(name, async () => {
        const answer = await op.api("PATCH", path, body);
        assert.equal(answer.status, status, JSON.stringify(answer.json));
        assert.equal(answer.json.error, "invalid_request");
        assert.match(answer.json.message, message);
      });
    }
    await t.step("another media type: 415", async () => {
      const answer = await op.api("PATCH", path, "status=running", {
        "Content-Type": "application/x-www-form-urlencoded",
      });
      assert.equal(answer.status, 415);
      assert.equal(answer.json.error, "unsupported_media_type");
    });
    await t.step("a body over 256 KiB: 413", async () => {
      const answer = await op.api("PATCH", path, {
        status: "running",
        result: "x".repeat(300_000),
      });
      assert.equal(answer.status, 413);
      assert.equal(answer.json.error, "payload_too_large");
    });
    assert.equal((await op.workspace.runs.get(op.businessId, "run-1"))!.value.status, "queued");

    const notFound: [string, string, unknown, string][] = [
      [
        "an unknown business",
        "/v1/businesses/nope/workflow-runs/run-1",
        { status: "running" },
        'no business "nope"',
      ],
      [
        "an unknown run",
        RUN_PATH(op, "run-9"),
        { status: "running" },
        `no workflow run "run-9" in business "${op.businessId}"`,
      ],
      [
        "reading an unknown run",
        RUN_PATH(op, "run-9"),
        undefined,
        `no workflow run "run-9" in business "${op.businessId}"`,
      ],
      ["an unknown connection", `/v1/businesses/${op.businessId}/connections/c-9`, {
        status: "connected",
      }, `no connection "c-9" in business "${op.businessId}"`],
      [
        "a path that does not decode",
        `/v1/businesses/${op.businessId}/workflow-runs/%zz`,
        undefined,
        "the path names nothing: a segment is not percent-encoded UTF-8",
      ],
      [
        "an id no record can have",
        RUN_PATH(op, "a".repeat(65)),
        { status: "running" },
        '"runId" names nothing: ids are 1 to 64 letters, digits and . _ : ~ -',
      ],
      [
        "the catalogue of an unknown business",
        "/v1/businesses/nope/catalogue",
        CATALOGUE,
        'no business "nope"',
      ],
    ];
    for (const [name, where, body, message] of notFound) {
      await t.step(`${name}: 404`, async () => {
        const answer = await op.api(
          body === undefined ? "GET" : body === CATALOGUE ? "PUT" : "PATCH",
          where,
          body,
        );
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, { error: "not_found", message });
      });
    }
  } finally {
    await op.close();
  }
});

Deno.test("updateConnection: the state the business's systems report is what agents read", async () => {
  const op = await startOperatorServer();
  try {
    await op.workspace.connections.put(op.businessId, {
      id: "conn-shop",
      kind: "commerce",
      service: "Storefront",
      label: "shop.example",
      status: "connected",
      updatedAt: 1_000,
    });
    const answer = await op.api("PATCH", `/v1/businesses/${op.businessId}/connections/conn-shop`, {
      status: "needs_reconnect",
      label: "shop2.example",
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.equal(answer.json.status, "needs_reconnect");
    assert.equal(answer.json.label, "shop2.example");
    assert.ok(answer.json.updatedAt > 1_000);
    const { connections } = await op.agentReads("list_connections");
    assert.deepEqual(connections, [answer.json]);
    const bad = await op.api("PATCH", `/v1/businesses/${op.businessId}/connections/conn-shop`, {
      status: "broken",
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, '"status": must be connected, disconnected or needs_reconnect');
    const [entry] = await createAuditLog(op.server.store, Date.now).list(op.businessId);
    assert.equal(entry!.action, "updateConnection");
    assert.equal(entry!.actor, "operator");
    assert.equal(
      entry!.summary,
      "Connection conn-shop (Storefront, shop.example, now shop2.example): connected → needs_reconnect",
    );
  } finally {
    await op.close();
  }
});
