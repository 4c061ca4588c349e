// What a crash can lose of the upstream calls' audit: main.ts (the start task's flags, a Deno KV
// file on Deno, SQLite on Node.js) under 16 agents calling an upstream tool, killed with SIGKILL while calls are in flight.
// Entries are committed behind the answers, at most MAX_UNSTORED of them waiting
// (src/gateway/call_audit.ts): every answered call but that many at most has its entry after the
// crash. After SIGTERM none is missing: shutdown waits for every entry.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { MAX_UNSTORED } from "../../../src/gateway/call_audit.ts";
import { prepareSchema } from "../../../src/schema.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { mainCommand, originsEnv, ROOT, startTaskFlags } from "../support/main_process.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

const AGENTS = 16;
/** Answered calls before the signal: enough for many group commits. */
const ANSWERED_BEFORE_SIGNAL = 1_500;
const HIGH = 1_000_000;

async function crashRun(signal: "SIGKILL" | "SIGTERM") {
  const env = originsEnv();
  const id = crypto.randomUUID();
  // The embedded store of the runtime under test: Node.js has no Deno KV to open.
  const dataFile = storeFile(`data/audit-crash-${id}`);
  const upstreamsFile = `data/audit-crash-${id}-upstreams.json`;
  const path = new URL(dataFile, ROOT).pathname;
  const upstream = startTinyUpstream();
  await Deno.mkdir(new URL("data/", ROOT), { recursive: true });
  try {
    let store = await openStoreFile(path);
    const { businessId, token } = await (async () => {
      await prepareSchema(store, Date.now);
      const { account, business } = await createAccounts(store, Date.now)
        .createAccountWithBusiness("crash@example.com", "Crash");
      const { tokens } = await issueGrant({ config: resolveConfig(env), store, now: Date.now }, {
        accountId: account.id,
        businessId: business.id,
        clientId: "crash-client",
        scopes: ["app.access", "upstream.tiny"],
      });
      return { businessId: business.id, token: tokens.access_token };
    })();
    await store.close();
    await Deno.writeTextFile(
      new URL(upstreamsFile, ROOT),
      JSON.stringify({
        upstreams: [{
          name: "tiny",
          url: upstream.url,
          rateLimit: { perMinute: HIGH, burst: HIGH },
        }],
      }),
    );
    const child = mainCommand(await startTaskFlags(), {
      ...env,
      VESTIBULE_DATA: `./${dataFile}`,
      VESTIBULE_MAIL: "log",
      VESTIBULE_UPSTREAMS: upstreamsFile,
      VESTIBULE_RATE_LIMITS: `workspace=${HIGH}:${HIGH}`,
    }).spawn();
    // The request log is read to its end, or the server would block writing it.
    const stdout = new Response(child.stdout).text();
    const stderr = new Response(child.stderr).text();
    const call = async () => {
      const response = await fetch(`${env.VESTIBULE_API_URL}/api/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "tiny__add", arguments: { a: 1, b: 2 } },
        }),
      });
      const answer = await response.json();
      return answer.result?.structuredContent?.sum === 3;
    };
    // Listening, and the upstream's tool listed; a server that stopped at start fails here.
    let exited = false;
    void child.status.then(() => exited = true);
    for (let ready = false; !ready;) {
      if (exited) assert.fail(`the server stopped before it served:\n${await stderr}`);
      ready = await call().catch(() => false);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    let answered = 1;
    let stop = false;
    const agents = Array.from({ length: AGENTS }, async () => {
      while (!stop) {
        if (await call().catch(() => false)) answered++;
        if (answered >= ANSWERED_BEFORE_SIGNAL && !stop) {
          stop = true;
          child.kill(signal);
        }
      }
    });
    await Promise.all(agents);
    // Calls in flight at the signal may have reached the upstream, answered or not.
    const status = await child.status;
    await stdout;
    assert.equal(
      signal === "SIGKILL" ? status.signal : status.code,
      signal === "SIGKILL" ? "SIGKILL" : 0,
      await stderr,
    );
    store = await openStoreFile(path);
    let stored = 0;
    try {
      for await (const { entry } of createAuditLog(store, Date.now).scan(businessId)) {
        if (entry.action === "tiny__add") stored++;
      }
    } finally {
      await store.close();
    }
    return { answered, stored, reached: upstream.calls };
  } finally {
    await upstream.close();
    for (const suffix of ["", "-shm", "-wal"]) {
      await Deno.remove(new URL(dataFile + suffix, ROOT)).catch(() => {});
    }
    await Deno.remove(new URL(upstreamsFile, ROOT)).catch(() => {});
  }
}

Deno.test("kill -9 under load loses at most MAX_UNSTORED answered calls' audit entries", async () => {
  const { answered, stored, reached } = await crashRun("SIGKILL");
  const lost = Math.max(0, answered - stored);
  console.log(
    `kill -9: ${answered} calls answered, ${reached} reached the upstream, ${stored} entries ` +
      `stored: ${lost} answered calls without an entry (bound ${MAX_UNSTORED})`,
  );
  assert.ok(lost <= MAX_UNSTORED, `${lost} lost`);
  // No entry without a call that reached the upstream.
  assert.ok(stored <= reached, `${stored} stored, ${reached} reached`);
});

Deno.test("SIGTERM under load: every call that reached the upstream has its entry", async () => {
  const { answered, stored, reached } = await crashRun("SIGTERM");
  assert.ok(answered <= reached);
  assert.equal(stored, reached);
});
