// The operator listener (VESTIBULE_ADMIN_LISTEN): metrics move with traffic, /ready follows
// the store, and promtool accepts the exposition.
import assert from "node:assert/strict";
import { createOutbox } from "../../src/outbox/outbox.ts";
import type { Store } from "../../src/store/store.ts";
import { freePorts, startTestServer } from "./harness.ts";

function adminEnv(): Record<string, string> {
  return { VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${freePorts(1)[0]}` };
}

async function scrape(adminUrl: string | null): Promise<string> {
  const response = await fetch(`${adminUrl}/metrics`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  return await response.text();
}

/** The value of the sample written exactly `series` (name and labels), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

Deno.test("metrics: requests are counted by origin and status, with durations and gauges", async () => {
  const server = await startTestServer(adminEnv());
  try {
    for (let i = 0; i < 3; i++) await (await fetch(`${server.baseUrl}/`)).body?.cancel();
    await (await fetch(`${server.authUrl}/no-such-page`)).body?.cancel();
    const text = await scrape(server.adminUrl);
    assert.equal(sample(text, 'vestibule_http_requests_total{origin="base",status="200"}'), 3);
    assert.equal(sample(text, 'vestibule_http_requests_total{origin="auth",status="404"}'), 1);
    assert.equal(sample(text, 'vestibule_http_request_duration_seconds_count{origin="base"}'), 3);
    assert.equal(
      sample(text, 'vestibule_http_request_duration_seconds_bucket{origin="base",le="+Inf"}'),
      3,
    );
    assert.equal(sample(text, 'vestibule_outbox_messages{state="pending"}'), 0);
    assert.ok(sample(text, "process_resident_memory_bytes")! > 0);
    // The scrape itself is not one of the public origins' requests.
    assert.equal(
      sample(
        await scrape(server.adminUrl),
        'vestibule_http_requests_total{origin="base",status="200"}',
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
    const { mutation } = createOutbox({ store: server.store, now: Date.now })
      .record({ kind: "test", payload: {}, label: "test message" });
    assert.ok(await server.store.commit([], [mutation]));
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
  let failing = false;
  const server = await startTestServer(adminEnv(), {
    wrapStore: (store): Store => ({
      ...store,
      get: (key) => failing ? Promise.reject(new Error("disk gone")) : store.get(key),
      close: () => store.close(),
    }),
  });
  try {
    const ready = await fetch(`${server.adminUrl}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true });
    failing = true;
    const notReady = await fetch(`${server.adminUrl}/ready`);
    assert.equal(notReady.status, 503);
    assert.deepEqual(await notReady.json(), {
      ready: false,
      reason: "the store does not answer",
    });
  } finally {
    failing = false;
    await server.close();
  }
});

const promtool = await new Deno.Command("promtool", { args: ["--version"] }).output()
  .then((out) => out.success, () => false);
if (!promtool) {
  console.warn("metrics_test: promtool not found; install the prometheus package to run it");
}

Deno.test({
  name: "metrics: promtool check metrics accepts the exposition",
  ignore: !promtool,
  async fn() {
    const server = await startTestServer(adminEnv());
    try {
      await (await fetch(`${server.baseUrl}/`)).body?.cancel();
      const text = await scrape(server.adminUrl);
      const check = new Deno.Command("promtool", {
        args: ["check", "metrics"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = check.stdin.getWriter();
      await writer.write(new TextEncoder().encode(text));
      await writer.close();
      const out = await check.output();
      const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, said);
      assert.equal(said.trim(), "", said);
    } finally {
      await server.close();
    }
  },
});
