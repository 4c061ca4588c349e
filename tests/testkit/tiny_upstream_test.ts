// The tiny upstream (testkit/tiny_upstream.ts) spoken to with plain fetch, in both eras: what
// the gateway's tests and the benchmark rely on it to do.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../testkit/tiny_upstream_tools.ts";

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON body, or for an event stream each event's data, parsed. */
  readonly body: unknown;
  readonly events: unknown[];
}

async function post(
  url: string,
  message: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Exchange> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
  const text = await response.text();
  const events = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
    ? text.split("\n").filter((line) => line.startsWith("data: ")).map((line) =>
      JSON.parse(line.slice(6))
    )
    : [];
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? null : events.length > 0 ? events.at(-1) : JSON.parse(text),
    events,
  };
}

/** The legacy handshake: the session's headers for every later request. */
async function handshake(url: string, version = LEGACY): Promise<Record<string, string>> {
  const opened = await post(url, {
    id: 0,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  assert.equal(opened.status, 200);
  const sessionId = opened.headers.get("mcp-session-id");
  assert.ok(sessionId);
  const headers = { "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": version };
  assert.equal((await post(url, { method: "notifications/initialized" }, headers)).status, 202);
  return headers;
}

function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
    ...(name === undefined ? {} : { "Mcp-Name": name }),
  };
}

const ECHO: TinyTool = {
  definition: { name: "echo", description: "Says it back.", inputSchema: { type: "object" } },
  handler: (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
};

Deno.test("the tiny upstream opens a session with initialize, then lists and calls add", async () => {
  const upstream = startTinyUpstream();
  try {
    const opened = await post(upstream.url, {
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    assert.equal(opened.status, 200);
    assert.deepEqual((opened.body as { result: unknown }).result, {
      protocolVersion: "2025-06-18",
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: "tiny-upstream", version: "1.0.0" },
    });
    const headers = {
      "Mcp-Session-Id": opened.headers.get("mcp-session-id")!,
      "MCP-Protocol-Version": "2025-06-18",
    };
    assert.equal(upstream.sessions, 1);

    const listed = await post(upstream.url, { id: 2, method: "tools/list" }, headers);
    assert.deepEqual(listed.body, {
      jsonrpc: "2.0",
      id: 2,
      result: { tools: [ADD_TOOL.definition] },
    });
    const called = await post(upstream.url, {
      id: 3,
      method: "tools/call",
      params: { name: "add", arguments: { a: 1, b: 2 } },
    }, headers);
    assert.deepEqual(called.body, {
      jsonrpc: "2.0",
      id: 3,
      result: { content: [{ type: "text", text: "3" }], structuredContent: { sum: 3 } },
    });
    assert.equal(upstream.calls, 1);
    assert.deepEqual(upstream.lastCall?.arguments, { a: 1, b: 2 });
    const health = await fetch(new URL("/health", upstream.url));
    assert.deepEqual(await health.json(), { calls: 1 });
  } finally {
    await upstream.close();
  }
});

Deno.test("an unknown version asked at initialize gets the newest legacy one", async () => {
  const upstream = startTinyUpstream();
  try {
    const opened = await post(upstream.url, {
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t" } },
    });
    assert.equal(
      (opened.body as { result: { protocolVersion: string } }).result.protocolVersion,
      LEGACY,
    );
    await fetch(upstream.url, {
      method: "DELETE",
      headers: { "Mcp-Session-Id": opened.headers.get("mcp-session-id")! },
    }).then((r) => r.body?.cancel());
  } finally {
    await upstream.close();
  }
});

Deno.test("a request without a session is 400, with an unknown or ended one 404", async () => {
  const upstream = startTinyUpstream();
  try {
    const list = { id: 1, method: "tools/list" };
    const missing = await post(upstream.url, list, { "MCP-Protocol-Version": LEGACY });
    assert.equal(missing.status, 400);
    assert.match(JSON.stringify(missing.body), /Mcp-Session-Id header is missing/);

    const unknown = await post(upstream.url, list, {
      "Mcp-Session-Id": "not-issued",
      "MCP-Protocol-Version": LEGACY,
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32001, message: "Session not found" },
    });

    const headers = await handshake(upstream.url);
    const ended = await fetch(upstream.url, { method: "DELETE", headers });
    await ended.body?.cancel();
    assert.equal(ended.status, 204);
    assert.equal((await post(upstream.url, list, headers)).status, 404);

    const dropped = await handshake(upstream.url);
    upstream.dropSessions();
    assert.equal((await post(upstream.url, list, dropped)).status, 404);
    assert.equal(upstream.sessions, 0);
  } finally {
    await upstream.close();
  }
});

Deno.test("a legacy request whose version header is not the session's is 400", async () => {
  const upstream = startTinyUpstream();
  try {
    const headers = await handshake(upstream.url, "2025-06-18");
    const wrong = await post(upstream.url, { id: 1, method: "tools/list" }, {
      ...headers,
      "MCP-Protocol-Version": LEGACY,
    });
    assert.equal(wrong.status, 400);
    assert.match(JSON.stringify(wrong.body), /is not the session's/);
  } finally {
    await upstream.close();
  }
});

Deno.test("setTools changes the list, and with notify tells the session's open stream", async () => {
  const upstream = startTinyUpstream();
  try {
    const headers = await handshake(upstream.url);
    const stream = await fetch(upstream.url, {
      headers: { ...headers, Accept: "text/event-stream" },
    });
    assert.equal(stream.status, 200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value, ": open\n\n");

    const changed = { ...ADD_TOOL, definition: { ...ADD_TOOL.definition, description: "Sums." } };
    upstream.setTools([changed, ECHO], { notify: true });
    assert.equal(
      (await reader.read()).value,
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
    );
    const listed = await post(upstream.url, { id: 1, method: "tools/list" }, headers);
    assert.deepEqual(listed.body, {
      jsonrpc: "2.0",
      id: 1,
      result: { tools: [changed.definition, ECHO.definition] },
    });
    const echoed = await post(upstream.url, {
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { x: 1 } },
    }, headers);
    assert.deepEqual((echoed.body as { result: unknown }).result, {
      content: [{ type: "text", text: '{"x":1}' }],
    });
    await reader.cancel();
  } finally {
    await upstream.close();
  }
});

Deno.test("tools/list pages by pageSize and refuses a cursor it did not give", async () => {
  const upstream = startTinyUpstream({ era: "modern", pageSize: 1, tools: [ADD_TOOL, ECHO] });
  try {
    const page = (cursor?: string) =>
      post(upstream.url, {
        id: 1,
        method: "tools/list",
        params: { _meta: MODERN_META, ...(cursor === undefined ? {} : { cursor }) },
      }, modernHeaders("tools/list"));
    const first = (await page()).body as { result: Record<string, unknown> };
    assert.deepEqual(first.result, {
      resultType: "complete",
      tools: [ADD_TOOL.definition],
      nextCursor: "1",
      ttlMs: 0,
      cacheScope: "public",
    });
    const second = (await page("1")).body as { result: Record<string, unknown> };
    assert.deepEqual(second.result["tools"], [ECHO.definition]);
    assert.equal(second.result["nextCursor"], undefined);
    const bad = (await page("7")).body as { error: { code: number } };
    assert.equal(bad.error.code, -32602);
  } finally {
    await upstream.close();
  }
});

Deno.test("the modern era answers server/discover and calls without a session", async () => {
  const upstream = startTinyUpstream({ era: "both" });
  try {
    const discovered = await post(upstream.url, {
      id: 1,
      method: "server/discover",
      params: { _meta: MODERN_META },
    }, modernHeaders("server/discover"));
    assert.equal(discovered.status, 200);
    assert.deepEqual((discovered.body as { result: unknown }).result, {
      resultType: "complete",
      supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
      capabilities: { tools: { listChanged: true } },
      ttlMs: 0,
      cacheScope: "public",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "tiny-upstream", version: "1.0.0" } },
    });
    const called = await post(upstream.url, {
      id: 2,
      method: "tools/call",
      params: { name: "add", arguments: { a: 2, b: 5 }, _meta: MODERN_META },
    }, modernHeaders("tools/call", "add"));
    assert.deepEqual((called.body as { result: unknown }).result, {
      resultType: "complete",
      content: [{ type: "text", text: "7" }],
      structuredContent: { sum: 7 },
    });
    assert.equal(upstream.sessions, 0);

    const misnamed = await post(upstream.url, {
      id: 3,
      method: "tools/call",
      params: { name: "add", arguments: { a: 2, b: 5 }, _meta: MODERN_META },
    }, modernHeaders("tools/call", "echo"));
    assert.equal(misnamed.status, 400);
    assert.equal((misnamed.body as { error: { code: number } }).error.code, -32020);
    // The same endpoint still opens legacy sessions.
    await handshake(upstream.url);
    assert.equal(upstream.sessions, 1);
  } finally {
    await upstream.close();
  }
});

Deno.test("each era refuses what only the other speaks", async () => {
  const legacy = startTinyUpstream({ era: "legacy" });
  const modern = startTinyUpstream({ era: "modern" });
  try {
    // A legacy server knows no discover: without a session it is 400, as common servers answer.
    const discover = await post(legacy.url, {
      id: 1,
      method: "server/discover",
      params: { _meta: MODERN_META },
    }, modernHeaders("server/discover"));
    assert.equal(discover.status, 400);
    const initialize = await post(modern.url, {
      id: 1,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "t" } },
    });
    assert.equal(initialize.status, 400);
    assert.equal((initialize.body as { error: { code: number } }).error.code, -32022);
  } finally {
    await legacy.close();
    await modern.close();
  }
});

Deno.test("SSE answers carry a call's progress before its result, and cancel aborts it", async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => started = resolve);
  const slow: TinyTool = {
    definition: { name: "slow", inputSchema: { type: "object" } },
    handler: async (_args, { progress, signal }) => {
      progress(1, 2, "half");
      started();
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      return { content: [{ type: "text", text: signal.aborted ? "cancelled" : "done" }] };
    },
  };
  const upstream = startTinyUpstream({ answer: "sse", tools: [slow] });
  try {
    const headers = await handshake(upstream.url);
    const answer = post(upstream.url, {
      id: 7,
      method: "tools/call",
      params: { name: "slow", arguments: {}, _meta: { progressToken: "p" } },
    }, headers);
    await running;
    const cancelled = await post(upstream.url, {
      method: "notifications/cancelled",
      params: { requestId: 7 },
    }, headers);
    assert.equal(cancelled.status, 202);
    const { events } = await answer;
    assert.deepEqual(events, [
      {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "p", progress: 1, total: 2, message: "half" },
      },
      { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "cancelled" }] } },
    ]);
    assert.deepEqual(upstream.notifications.map((n) => n.method), [
      "notifications/initialized",
      "notifications/cancelled",
    ]);
  } finally {
    await upstream.close();
  }
});
