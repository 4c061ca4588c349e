// One agent's journey with tracing on, collected by a real OTLP receiver: sign-in, consent and
// token, tools/list, a direct upstream call and a gated one the owner approves. The spans form
// the agent's trace, follow the MCP semantic conventions, carry the context to the upstream, and
// no secret or personal value is in any exported byte.
// deno-lint-ignore-file no-explicit-any -- JSON-RPC messages picked apart
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { hiddenField } from "../support/accounts_browser.ts";
import { until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { oauthFixture, ownerBrowser, registerClient, tokensFor } from "../support/oauth_helpers.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlp_receiver.ts";
import { serverNode } from "../support/server_runtime.ts";
import { connect, personBrowser, startPersonUpstream } from "../support/person_upstream_support.ts";

const AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN = "00f067aa0ba902b7";
const SERVER = 2;
const CLIENT = 3;

const ECHO: TinyTool = {
  definition: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
  handler: (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
};
const PAY: TinyTool = {
  definition: { name: "pay", description: "Pays.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: "paid" }] }),
};

/** A W3C traceparent's trace and parent ids. */
function parsed(traceparent: string | null | undefined): { traceId: string; parentId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(traceparent ?? "");
  assert.ok(match, `a traceparent: ${traceparent}`);
  return { traceId: match[1]!, parentId: match[2]! };
}

Deno.test("an agent's journey is one trace, named and attributed as the MCP conventions say, and carries no secret", async () => {
  const receiver = startOtlpReceiver();
  const tiny = startTinyUpstream({ era: "modern", tools: [ECHO, PAY] });
  const file = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["pay"] },
  ]);
  const events = await startTestReceiver();
  const fx = await oauthFixture({
    ...events.env,
    VESTIBULE_OTEL: "on",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_MCP_PAGE_SIZE: "200",
  });
  const secrets: string[] = [
    "owner@example.com",
    "argument-value-3141",
    "invoice-2718",
    events.secret,
  ];
  let closed = false;
  try {
    const owner = await ownerBrowser(fx, "owner@example.com");
    const client = await registerClient(fx);
    const tokens = await tokensFor(fx, owner, client, { scope: "app.access upstream.tiny" });
    const accessToken = String(tokens.access_token);
    secrets.push(accessToken, String(tokens.refresh_token));
    let id = 0;
    const mcp = async (method: string, params: Record<string, unknown>) => {
      const response = await fetch(`${fx.server.apiUrl}/api/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-06-18",
          "Authorization": `Bearer ${accessToken}`,
          "traceparent": `00-${AGENT_TRACE}-${AGENT_SPAN}-01`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
      });
      assert.equal(response.status, 200);
      return (await response.json()) as any;
    };
    // The gateway learns the upstream's tools once it has started.
    await until(
      "the upstream's tools",
      async () =>
        (await mcp("tools/list", {})).result.tools.some((t: any) => t.name === "tiny__echo"),
    );
    const echoId = id + 1;
    const echoed = await mcp("tools/call", {
      name: "tiny__echo",
      arguments: { note: "argument-value-3141" },
    });
    assert.equal(echoed.result.isError, undefined, JSON.stringify(echoed));
    const upstreamHeader = tiny.lastCall?.headers.get("traceparent");
    const upstreamMeta = tiny.lastCall?.meta?.["traceparent"] as string | undefined;

    const pending = (await mcp("tools/call", {
      name: "tiny__pay",
      arguments: { invoice: "invoice-2718" },
    })).result.structuredContent;
    assert.equal(pending.status, "pending", JSON.stringify(pending));
    const page = await owner.get(pending.approvalUrl);
    const decided = await owner.post(pending.approvalUrl, {
      csrf: hiddenField(page.text, "csrf"),
      decision: "approve",
    });
    assert.equal(decided.status, 303, decided.text);
    assert.equal(tiny.lastCall?.name, "pay");
    await until(
      "the approved call's event",
      () => events.accepted.some((e: any) => e.type === "upstream.call_completed"),
    );

    // The sign-in links' tokens (an approval's link names its gate, which is no secret: the
    // page asks the owner to sign in).
    for (const mail of await fx.outbox.read()) {
      if (mail.link.includes("/approvals/")) continue;
      const secret = /[^/=]+$/.exec(mail.link)?.[0];
      assert.ok(secret !== undefined && secret.length >= 16, mail.link);
      secrets.push(secret);
    }
    await fx.close(); // exports what is pending
    closed = true;
    const spans = receiver.spans;
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const find = (what: string, test: (s: ReceivedSpan) => boolean) => {
      const found = spans.find(test);
      assert.ok(found, `${what} among ${spans.map((s) => s.name).join(", ")}`);
      return found;
    };

    // Sign-in, consent and token: server spans on {auth_url}, the grant type and outcome told.
    const tokenSpan = find("the token request", (s) => s.name === "POST /api/auth/oauth2/token");
    assert.equal(tokenSpan.kind, SERVER);
    assert.equal(tokenSpan.attributes["oauth.grant_type"], "authorization_code");
    assert.equal(tokenSpan.attributes["oauth.outcome"], "issued");
    find("the consent page", (s) => s.name.startsWith("GET /api/auth/oauth2/authorize"));

    // tools/list: the MCP span is a child of the HTTP span, which continues the agent's trace.
    const list = find("tools/list", (s) => s.name === "tools/list" && s.kind === SERVER);
    assert.equal(list.kind, SERVER);
    assert.equal(list.traceId, AGENT_TRACE);
    assert.equal(list.attributes["mcp.method.name"], "tools/list");
    assert.match(String(list.attributes["jsonrpc.request.id"]), /^\d+$/);
    assert.equal(list.attributes["mcp.protocol.version"], "2025-06-18");
    const http = byId.get(list.parentSpanId);
    assert.equal(http?.name, "POST /api/mcp");
    assert.equal(http?.parentSpanId, AGENT_SPAN, "the agent's span is the parent");

    // The direct call: the MCP span names the tool itself; the upstream call is its CLIENT child.
    const call = find("tools/call tiny__echo", (s) => s.name === "tools/call tiny__echo");
    assert.equal(call.attributes["mcp.method.name"], "tools/call");
    assert.equal(call.attributes["gen_ai.tool.name"], "tiny__echo");
    assert.equal(call.attributes["jsonrpc.request.id"], String(echoId));
    const upstream = find(
      "the upstream call",
      (s) => s.name === "tools/call echo" && s.parentSpanId === call.spanId,
    );
    assert.equal(upstream.kind, CLIENT);
    assert.equal(upstream.attributes["vestibule.upstream.name"], "tiny");
    assert.equal(upstream.attributes["network.transport"], "tcp");
    assert.equal(upstream.attributes["gen_ai.tool.name"], "echo");

    // The upstream got the context: a traceparent whose parent is that exported client span,
    // in the header and (it speaks 2026-07-28) in _meta; not the agent's header forwarded.
    const header = parsed(upstreamHeader);
    assert.deepEqual(header, { traceId: AGENT_TRACE, parentId: upstream.spanId });
    assert.deepEqual(parsed(upstreamMeta), header);

    // The gated call, made when the owner approved: its own trace, linked to the one that asked.
    const gated = find("the approved upstream call", (s) => s.name === "tools/call pay");
    assert.equal(gated.kind, CLIENT);
    const gate = byId.get(gated.parentSpanId);
    assert.equal(gate?.name, "gate tiny__pay");
    const asked = find("the gated request", (s) => s.name === "tools/call tiny__pay");
    assert.ok(
      gate.links.some((l) => l.traceId === asked.traceId && l.spanId === asked.spanId),
      `linked to the asking span: ${JSON.stringify(gate.links)}`,
    );
    assert.notEqual(gate.traceId, AGENT_TRACE, "in the owner's request's trace");
    assert.match(byId.get(gate.parentSpanId)?.name ?? "", /^POST \/approvals\/\*/);

    // The store and mail delivery are child spans too; never a key, a value or an address.
    const get = find("a store read", (s) => s.name === "store get");
    assert.equal(get.kind, CLIENT);
    assert.equal(get.attributes["db.system.name"], serverNode() === null ? "deno_kv" : "sqlite");
    assert.equal(get.attributes["db.operation.name"], "get");
    assert.ok(spans.some((s) => s.name === "store commit" && byId.has(s.parentSpanId)));
    const mail = find("a mail delivery", (s) => s.name === "deliver mail");
    assert.equal(mail.attributes["vestibule.delivery.kind"], "mail");
    const event = find("an event delivery", (s) => s.name === "deliver webhook");
    assert.equal(event.kind, CLIENT);

    // Audit entries leave as log records, in the trace of the request that wrote them.
    const audited = receiver.logs.filter((l) => l.eventName === "vestibule.audit");
    const echoEntry = audited.find((l) => l.attributes["vestibule.audit.action"] === "tiny__echo");
    assert.ok(echoEntry, `the direct call's entry among ${audited.length}`);
    assert.equal(echoEntry.traceId, AGENT_TRACE);
    assert.equal(echoEntry.attributes["vestibule.audit.actor"], "agent");
    assert.equal(echoEntry.body, "agent tiny__echo", "no summary: it may quote arguments");
    assert.ok(audited.some((l) => l.attributes["vestibule.audit.action"] === "approve"));

    // No token, code, e-mail address or argument value in any exported byte, either encoding.
    const exported = receiver.raw.map((bytes) => new TextDecoder().decode(bytes)).join("\n");
    for (const secret of secrets) {
      assert.ok(!exported.includes(secret), `an export carried ${secret.slice(0, 12)}…`);
    }
  } finally {
    if (!closed) await fx.close();
    await receiver.close();
    await tiny.close();
    await events.close();
    await Deno.remove(file);
  }
});

Deno.test("a per-person upstream call is a CLIENT span of the agent's trace, and no token of the person's leaves", async () => {
  const receiver = startOtlpReceiver();
  const setup = await startPersonUpstream({
    env: { VESTIBULE_OTEL: "on", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  });
  let closed = false;
  try {
    await connect(setup, await personBrowser(setup), "alice");
    const { token } = await setup.ws.token(["app.access", "upstream.crm"]);
    const called = await until("a call that reaches the upstream", async () => {
      const response = await fetch(`${setup.ws.server.apiUrl}/api/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-06-18",
          "Authorization": `Bearer ${token}`,
          "traceparent": `00-${AGENT_TRACE}-${AGENT_SPAN}-01`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "crm__whoami", arguments: {} },
        }),
      });
      const message = await response.json();
      return message.result?.isError === undefined && message.result;
    });
    assert.match(JSON.stringify(called), /alice/);
    const connections = JSON.stringify(
      await Array.fromAsync(
        setup.ws.server.store.list(["ws", setup.ws.businessId, "upstream_connection"]),
      ),
    );
    await setup.close();
    closed = true;
    const spans = receiver.spans;
    const mcp = spans.find((s) => s.name === "tools/call crm__whoami" && s.traceId === AGENT_TRACE);
    assert.ok(mcp, `the MCP span among ${spans.map((s) => s.name).join(", ")}`);
    const upstream = spans.find((s) =>
      s.name === "tools/call whoami" && s.parentSpanId === mcp.spanId
    );
    assert.ok(upstream, "the per-person upstream call is the MCP span's CLIENT child");
    assert.equal(upstream.kind, CLIENT);
    assert.equal(upstream.attributes["vestibule.upstream.name"], "crm");
    const exported = receiver.raw.map((bytes) => new TextDecoder().decode(bytes)).join("\n");
    for (const secret of [token, "owner@example.com", "alice"]) {
      assert.ok(!exported.includes(secret), `an export carried ${secret.slice(0, 12)}…`);
    }
    // Whatever the store holds of the connection (sealed tokens) never leaves either.
    const sealedValues = connections.match(/"[A-Za-z0-9_-]{40,}"/g) ?? [];
    assert.ok(sealedValues.length > 0, "the connection's sealed tokens were read");
    for (const sealed of sealedValues) {
      assert.ok(!exported.includes(sealed.slice(1, -1)), "a sealed token was exported");
    }
  } finally {
    if (!closed) await setup.close();
    await receiver.close();
  }
});
