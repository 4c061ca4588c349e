// A real PostgreSQL frozen (SIGSTOP) or stopped (pg_ctl stop -m immediate) under the running
// server (issue 23, points 3, 4 and 8): readiness says 503 within its own deadline, and a request
// that needs the store is told to come back (503, Retry-After, its JSON-RPC error), never that
// its token is bad, with one warning line each and no stack.
import assert from "node:assert/strict";
import { READY_DEADLINE_MS } from "../../../src/operator/listener.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { freePorts } from "../../../testkit/ports.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";

/** How long the signing keys' public halves are trusted in memory (signing_keys.ts). */
const KEY_CACHE_MS = 30_000;

Deno.test("a PostgreSQL outage under the running server", async (t) => {
  const cluster = await startPgCluster();
  let clock = Date.now();
  const now = () => clock;
  const [admin] = freePorts(1);
  const ws = await startWorkspaceServer({ VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${admin}` }, {
    now,
    dataUrl: await cluster.database(),
  });
  const ready = async () => {
    const started = performance.now();
    // A readiness that hangs fails here rather than holding the test.
    const response = await fetch(`${ws.server.adminUrl}/ready`, {
      signal: AbortSignal.timeout(READY_DEADLINE_MS + 5_000),
    });
    return {
      status: response.status,
      body: await response.json(),
      ms: performance.now() - started,
    };
  };
  try {
    const { token } = await ws.token(["app.access"]);
    // Issued now, presented only during the outage: its signature has never been verified.
    const { token: unseen } = await ws.token(["app.access"], { clientId: "other-client" });
    const before = await ws.call(token, "get_business");
    assert.equal(before.status, 200, JSON.stringify(before.message));

    await t.step("a frozen database: /ready says 503 within its deadline, every time", async () => {
      await cluster.freeze();
      try {
        const first = await ready();
        assert.deepEqual([first.status, first.body], [503, {
          ready: false,
          reason: "the store does not answer",
        }]);
        assert.ok(first.ms < READY_DEADLINE_MS + 1_000, `${first.ms} ms`);
        // The probe still waiting on the frozen read is shared, and already overdue.
        const second = await ready();
        assert.equal(second.status, 503);
        assert.ok(second.ms < READY_DEADLINE_MS / 2, `${second.ms} ms`);
      } finally {
        cluster.thaw();
      }
      // The overdue probe answers once the thawed server reads again: until then a request joins
      // it and is told 503 at once. Ready again within one deadline.
      let back = await ready();
      const giveUp = performance.now() + READY_DEADLINE_MS;
      while (back.status !== 200 && performance.now() < giveUp) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        back = await ready();
      }
      assert.deepEqual([back.status, back.body], [200, { ready: true }]);
    });

    await cluster.halt();
    const logged = ws.server.logs.length;

    await t.step("a tool call is 503 with Retry-After and its JSON-RPC error", async () => {
      const { status, response, message } = await ws.call(token, "get_business");
      assert.deepEqual([status, response.headers.get("Retry-After")], [503, "5"]);
      assert.deepEqual(JSON.parse(message), {
        jsonrpc: "2.0",
        id: 2,
        error: {
          code: -32000,
          message: "Service Unavailable: the store does not answer; retry after 5 seconds",
        },
      });
    });

    await t.step("a good token meeting the outage is 503, not 401 invalid_token", async () => {
      // Past the key cache: verifying the unseen token reads its key from the store.
      clock += KEY_CACHE_MS + 1;
      const { status, response, message } = await ws.call(unseen, "get_business");
      assert.deepEqual([status, response.headers.get("Retry-After")], [503, "5"]);
      assert.equal(response.headers.get("WWW-Authenticate"), null);
      assert.deepEqual(JSON.parse(message), {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: "Service Unavailable: the store does not answer; retry after 5 seconds",
        },
      });
    });

    await t.step("each failed request leaves one warning, without a stack", () => {
      const events = ws.server.logs.slice(logged).map((line) => JSON.parse(line))
        .filter((line) => line.message !== undefined);
      assert.deepEqual(events.map((e) => [e.level, e.message]), [
        ["warn", "store unavailable"],
        ["warn", "store unavailable"],
      ]);
      assert.ok(
        events.every((e) => e.stack === undefined && /^StoreUnavailableError: /.test(e.error)),
      );
    });

    await t.step("a person is shown the styled page, an OAuth client its error shape", async () => {
      const authorize = new URL(`${ws.server.authUrl}/api/auth/oauth2/authorize`);
      for (
        const [name, value] of Object.entries({
          response_type: "code",
          client_id: "some-client",
          redirect_uri: "https://client.example.com/callback",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
          state: "s",
          scope: "app.access",
        })
      ) authorize.searchParams.set(name, value);
      const page = await fetch(authorize, { headers: { Accept: "text/html" } });
      const text = await page.text();
      assert.deepEqual(
        [page.status, page.headers.get("Retry-After"), page.headers.get("Content-Type")],
        [503, "5", "text/html; charset=utf-8"],
      );
      assert.match(text, /<h1[^>]*>Briefly unavailable<\/h1>/);
      const token = await fetch(`${ws.server.authUrl}/api/auth/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "grant_type=refresh_token&refresh_token=abc&client_id=some-client",
      });
      assert.deepEqual([token.status, token.headers.get("Retry-After"), await token.json()], [
        503,
        "5",
        {
          error: "temporarily_unavailable",
          error_description: "The service is briefly unavailable; retry after 5 seconds",
        },
      ]);
    });
  } finally {
    await ws.close();
    await cluster.stop();
  }
});
