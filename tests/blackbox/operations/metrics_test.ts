// The operator listener (VESTIBULE_ADMIN_LISTEN): metrics move with traffic, /ready follows
// the store, and promtool accepts the exposition.
import assert from "node:assert/strict";
import { createOutbox } from "../../../src/outbox/outbox.ts";
import type { StoreFault, StoreOperation } from "../../../testkit/store_faults.ts";
import { startTestServer } from "../support/harness.ts";
import { freePorts } from "../../../testkit/ports.ts";
import { copyProject, originsEnv, whileServing } from "../support/main_process.ts";
import { MAIL_VERDICT_MS } from "../../../src/operator/listener.ts";
import { manualClock } from "../../store/store_contract.ts";
import { INITIALIZE, mcpPost } from "../support/mcp_helpers.ts";
import {
  adminEnv,
  assertPromtoolAccepts,
  PROMTOOL,
  sample,
  scrape,
} from "../support/metrics_helpers.ts";
import { startSmtpServer } from "../support/smtp_server.ts";

/** The store's `operation` fails, as on a disk that went away. */
const diskGone = (operation: StoreOperation): StoreFault => ({
  operations: [operation],
  error: { name: "Error", message: "disk gone" },
});

Deno.test("metrics: requests are counted by origin, route and status, with durations and gauges", async () => {
  const server = await startTestServer(adminEnv());
  try {
    for (let i = 0; i < 3; i++) await (await fetch(`${server.baseUrl}/`)).body?.cancel();
    await (await fetch(`${server.authUrl}/no-such-page`)).body?.cancel();
    // Two gates' pages: one route pattern, never the raw paths.
    for (const id of ["g1", "g2"]) {
      await (await fetch(`${server.authUrl}/approvals/${id}`)).body?.cancel();
    }
    const text = await scrape(server.adminUrl);
    const base = 'origin="base",route="/"';
    assert.equal(sample(text, `vestibule_http_requests_total{${base},status="200"}`), 3);
    assert.equal(
      sample(text, 'vestibule_http_requests_total{origin="auth",route="other",status="404"}'),
      1,
    );
    assert.ok(
      text.includes('vestibule_http_requests_total{origin="auth",route="/approvals/*",status="'),
    );
    assert.ok(!text.includes("g1") && !text.includes("no-such-page"), "no raw path");
    assert.equal(
      sample(
        text,
        'vestibule_http_request_duration_seconds_count{origin="auth",route="/approvals/*"}',
      ),
      2,
    );
    assert.equal(sample(text, `vestibule_http_request_duration_seconds_count{${base}}`), 3);
    assert.equal(
      sample(text, `vestibule_http_request_duration_seconds_bucket{${base},le="+Inf"}`),
      3,
    );
    assert.equal(sample(text, 'vestibule_outbox_messages{state="pending"}'), 0);
    assert.ok(sample(text, "process_resident_memory_bytes")! > 0);
    // The scrape itself is not one of the public origins' requests.
    assert.equal(
      sample(
        await scrape(server.adminUrl),
        'vestibule_http_requests_total{origin="base",route="/",status="200"}',
      ),
      3,
    );
    // Nor are the operator's routes served on the public listeners.
    const publicMetrics = await fetch(`${server.baseUrl}/metrics`);
    await publicMetrics.body?.cancel();
    assert.equal(publicMetrics.status, 404);
  } finally {
    await server.close();
  }
});

Deno.test("metrics: the outbox gauge counts deliveries by state", async () => {
  const server = await startTestServer(adminEnv());
  try {
    // Recorded claimed by its writer, as a sign-in does before its first attempt.
    const { mutations } = createOutbox({ store: server.store, now: Date.now })
      .record({ kind: "test", payload: {}, label: "test message" });
    assert.ok(await server.store.commit([], mutations));
    const text = await scrape(server.adminUrl);
    const total = ["pending", "sending", "sent", "failed"]
      .map((state) => sample(text, `vestibule_outbox_messages{state="${state}"}`)!)
      .reduce((a, b) => a + b, 0);
    assert.equal(sample(text, 'vestibule_outbox_messages{state="sending"}'), 1);
    assert.equal(total, 1);
  } finally {
    await server.close();
  }
});

Deno.test("metrics: store operations are timed and their failures counted, by operation", async () => {
  const server = await startTestServer(adminEnv());
  const listings = 'vestibule_store_operation_duration_seconds_count{operation="list"}';
  const listErrors = 'vestibule_store_errors_total{operation="list"}';
  try {
    const before = await scrape(server.adminUrl);
    assert.equal(sample(before, listErrors), 0);
    // The JWKS lists the signing keys on every request.
    for (let i = 0; i < 2; i++) {
      await (await fetch(`${server.authUrl}/api/auth/jwks`)).body?.cancel();
    }
    const after = await scrape(server.adminUrl);
    assert.equal(sample(after, listings)! - (sample(before, listings) ?? 0), 2);
    assert.ok(
      sample(after, 'vestibule_store_operation_duration_seconds_count{operation="get"}')! > 0,
    );
    await server.setStoreFault(diskGone("list"));
    const failed = await fetch(`${server.authUrl}/api/auth/jwks`);
    await failed.body?.cancel();
    assert.equal(failed.status, 500);
    await server.setStoreFault(null);
    assert.equal(sample(await scrape(server.adminUrl), listErrors), 1);
  } finally {
    await server.close();
  }
});

Deno.test("metrics: rate-limit refusals are counted by limit", async () => {
  const server = await startTestServer({ ...adminEnv(), VESTIBULE_RATE_LIMITS: "registration=1" });
  try {
    const before = await scrape(server.adminUrl);
    assert.equal(sample(before, 'vestibule_rate_limit_refusals_total{limit="registration"}'), 0);
    assert.equal(sample(before, 'vestibule_rate_limit_refusals_total{limit="mail"}'), 0);
    const register = () =>
      fetch(`${server.authUrl}/api/auth/oauth2/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["http://127.0.0.1/cb"] }),
      });
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const response = await register();
      await response.body?.cancel();
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [201, 429, 429]);
    const after = await scrape(server.adminUrl);
    assert.equal(sample(after, 'vestibule_rate_limit_refusals_total{limit="registration"}'), 2);
    assert.equal(sample(after, 'vestibule_rate_limit_refusals_total{limit="token"}'), 0);
  } finally {
    await server.close();
  }
});

Deno.test("ready: 200 while the store answers, 503 with the reason when it does not", async () => {
  const server = await startTestServer(adminEnv());
  try {
    const ready = await fetch(`${server.adminUrl}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true });
    await server.setStoreFault(diskGone("get"));
    const notReady = await fetch(`${server.adminUrl}/ready`);
    assert.equal(notReady.status, 503);
    assert.deepEqual(await notReady.json(), {
      ready: false,
      reason: "the store does not answer",
    });
  } finally {
    await server.close();
  }
});

Deno.test("ready: 503 when the SMTP server does not answer, its verdict kept a few seconds", async () => {
  const smtp = await startSmtpServer();
  const clock = manualClock(Date.now());
  const server = await startTestServer({
    ...adminEnv(),
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: "Vestibule <vestibule@example.com>",
  }, { now: clock.now });
  const ready = async () => {
    const response = await fetch(`${server.adminUrl}/ready`);
    return [response.status, await response.json()];
  };
  try {
    // Concurrent and repeated probes share one SMTP conversation.
    const answers = await Promise.all([ready(), ready(), ready()]);
    assert.deepEqual(answers, Array(3).fill([200, { ready: true }]));
    assert.deepEqual(await ready(), [200, { ready: true }]);
    assert.equal(smtp.connections, 1);
    await smtp.close();
    clock.advance(MAIL_VERDICT_MS - 1);
    assert.deepEqual(await ready(), [200, { ready: true }], "the verdict still stands");
    clock.advance(1);
    assert.deepEqual(await ready(), [503, {
      ready: false,
      reason: "the mail server does not answer",
    }]);
    const logged = server.logs.map((line) => JSON.parse(line))
      .filter((line) => line.message === "not ready: the mail server does not answer");
    assert.equal(logged.length, 1);
    assert.match(logged[0].error, /ECONNREFUSED|refused/i);
  } finally {
    await server.close();
    await smtp.close();
  }
});

if (!PROMTOOL) {
  console.warn("metrics_test: promtool not found; install the prometheus package to run it");
}

Deno.test({
  name: "metrics: promtool check metrics accepts the exposition",
  ignore: !PROMTOOL,
  async fn() {
    const server = await startTestServer(adminEnv());
    try {
      await (await fetch(`${server.baseUrl}/`)).body?.cancel();
      // Every family with samples: MCP requests with and without a tool, an MCP error.
      for (const body of [INITIALIZE, { ...INITIALIZE, method: "tools/call" }]) {
        await (await mcpPost(`${server.authUrl}/mcp`, body)).body?.cancel();
      }
      const text = await scrape(server.adminUrl);
      assert.ok(
        text.includes(
          'vestibule_mcp_requests_total{endpoint="onboarding",method="tools/call",tool="other"} 1',
        ),
      );
      assert.ok(text.includes('vestibule_mcp_errors_total{endpoint="onboarding",code="-32602"} 1'));
      await assertPromtoolAccepts(text);
    } finally {
      await server.close();
    }
  },
});

Deno.test("main.ts with the start task's permissions: metrics by route, the store measured, /ready asks the SMTP server", async () => {
  const dir = await copyProject();
  const origins = originsEnv();
  const admin = adminEnv();
  const [closedPort] = freePorts(1);
  try {
    await whileServing(dir, {
      ...origins,
      ...admin,
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_MAIL: `smtp://127.0.0.1:${closedPort}`,
      VESTIBULE_MAIL_FROM: "vestibule@example.com",
    }, async () => {
      const adminUrl = `http://${admin.VESTIBULE_ADMIN_LISTEN}`;
      await (await fetch(`${origins.VESTIBULE_AUTH_URL}/api/auth/jwks`)).body?.cancel();
      const text = await scrape(adminUrl);
      assert.equal(
        sample(
          text,
          'vestibule_http_requests_total{origin="auth",route="/api/auth/jwks",status="200"}',
        ),
        1,
      );
      assert.ok(
        sample(text, 'vestibule_store_operation_duration_seconds_count{operation="list"}')! > 0,
      );
      const ready = await fetch(`${adminUrl}/ready`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), {
        ready: false,
        reason: "the mail server does not answer",
      });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
