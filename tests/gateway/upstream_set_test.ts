// The upstream set's own logic, with an injected client that answers what each test says: how an
// upstream's state, problem and generation move, that failed calls end as isError results, that
// list_changed lists again, hidden tools are dropped, an upstream lacking a tool the file names
// serves none, and that listing is retried with back-off.
import assert from "node:assert/strict";
import {
  type McpClient,
  type UpstreamAnswer,
  UpstreamError,
  type UpstreamResult,
  type UpstreamTool,
} from "../../src/gateway/mcp_client.ts";
import { createUpstreamSet, type UpstreamSetDeps } from "../../src/gateway/upstream_set.ts";
import type { UpstreamConfig } from "../../src/config/upstreams.ts";

const UPSTREAM: UpstreamConfig = {
  name: "tiny",
  title: "Tiny",
  transport: { kind: "http", url: "http://127.0.0.1:1/mcp", headers: {} },
  gated: new Set(),
  hidden: new Set(),
  toolScopes: new Map(),
  ownerOnly: false,
  businesses: null,
  timeoutMs: 5_000,
  maxResponseBytes: 1_000_000,
  forwardIdentity: false,
  rateLimit: { perMinute: 60, burst: 10 },
  auth: null,
};

const tool = (name: string, description = `The ${name} tool.`): UpstreamTool => ({
  name,
  description,
  inputSchema: { type: "object" },
});

/** A client whose listings and calls the test scripts; it counts them and keeps the listener. */
class FakeClient implements McpClient {
  version = "2025-11-25";
  /** What the next listings answer (a thrown error is a failed listing). */
  list: () => UpstreamTool[] = () => [tool("add")];
  call: () => UpstreamResult = () => ({ content: [{ type: "text", text: "ok" }] });
  listings: number[] = [];
  listener: (() => void) | null = null;
  closed = false;
  #waiters: { count: number; resolve: () => void }[] = [];

  listTools(): Promise<UpstreamTool[]> {
    this.listings.push(performance.now());
    for (const waiter of this.#waiters.filter((w) => this.listings.length >= w.count)) {
      waiter.resolve();
    }
    try {
      return Promise.resolve(this.list());
    } catch (error) {
      return Promise.reject(error);
    }
  }
  callTool(): Promise<UpstreamResult> {
    try {
      return Promise.resolve(this.call());
    } catch (error) {
      return Promise.reject(error);
    }
  }
  taskRequest(): Promise<UpstreamAnswer> {
    return Promise.reject(new Error("no tasks here"));
  }
  onToolsChanged(listener: () => void): void {
    this.listener = listener;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  /** Resolves once `count` listings began (and one more turn, so that each has ended). */
  async listed(count: number): Promise<void> {
    if (this.listings.length < count) {
      // The set's timers do not keep the process alive (unrefTimer): this one does, meanwhile.
      const alive = setInterval(() => {}, 1_000);
      await new Promise<void>((resolve) => this.#waiters.push({ count, resolve }));
      clearInterval(alive);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

function start(
  client: FakeClient,
  deps: Partial<UpstreamSetDeps> = {},
  upstream: Partial<UpstreamConfig> = {},
) {
  const logs: string[] = [];
  const metrics: [string, string][] = [];
  const set = createUpstreamSet({ upstreams: [{ ...UPSTREAM, ...upstream }] }, {
    log: (line) => logs.push(line),
    now: Date.now,
    connect: () => client,
    metrics: { call: (upstream, outcome) => metrics.push([upstream, outcome]) },
    ...deps,
  });
  return { set, live: set.get("tiny")!, logs, metrics };
}

Deno.test("an upstream starts, is ready once listed, and its generation moves only on change", async () => {
  const client = new FakeClient();
  client.list = () => [tool("add"), tool("secret"), tool("echo")];
  const { set, live, logs } = start(client, {}, { hidden: new Set(["secret"]) });
  try {
    assert.equal(set.get("nope"), undefined);
    await live.settled(1_000);
    assert.equal(live.state, "ready");
    assert.equal(live.problem, null);
    assert.deepEqual([...live.tools!.keys()], ["add", "echo"], "hidden tools are dropped");
    assert.equal(live.tools!.get("add")!.definition.description, "The add tool.");
    assert.match(live.tools!.get("add")!.hash, /^[0-9a-f]{64}$/);
    const ready = live.generation;
    assert.ok(ready > 0);
    assert.ok(logs.some((line) => line.includes('"message":"upstream listed"')));

    await live.refresh();
    assert.equal(live.generation, ready, "the same tools: the same generation");

    client.list = () => [tool("add", "Adds, differently."), tool("secret"), tool("echo")];
    await live.refresh();
    assert.equal(live.generation, ready + 1, "a changed definition: a new generation");
    assert.equal(live.tools!.get("add")!.definition.description, "Adds, differently.");
  } finally {
    await set.close();
  }
  assert.ok(client.closed);
});

Deno.test("the upstream saying its list changed lists again", async () => {
  const client = new FakeClient();
  const { set, live } = start(client);
  try {
    await live.settled(1_000);
    const before = live.generation;
    client.list = () => [tool("add"), tool("multiply")];
    client.listener!();
    await client.listed(2);
    assert.deepEqual([...live.tools!.keys()], ["add", "multiply"]);
    assert.equal(live.generation, before + 1);
  } finally {
    await set.close();
  }
});

Deno.test("an upstream that stops answering is down, keeps its listing, and its calls are isError results", async () => {
  const client = new FakeClient();
  const { set, live, logs, metrics } = start(client, { retryMs: 60_000 });
  try {
    await live.settled(1_000);
    const ready = live.generation;
    client.call = () => {
      throw new UpstreamError("unreachable", "Tiny is unreachable: connection refused");
    };
    const record = await live.call("add", { a: 1 }, {});
    assert.deepEqual(record.result, {
      content: [{ type: "text", text: "Tiny is unreachable: connection refused" }],
      isError: true,
    });
    assert.equal(record.outcome, "unreachable");
    assert.equal(live.state, "down");
    assert.equal(live.problem, "Tiny is unreachable: connection refused");
    assert.equal(live.generation, ready + 1);
    assert.deepEqual([...live.tools!.keys()], ["add"], "the last listing stays");
    await live.call("add", {}, {});
    assert.equal(live.generation, ready + 1, "down twice is one change");
    assert.equal(logs.filter((line) => line.includes("upstream not answering")).length, 1);

    // A timeout says nothing about the upstream being down.
    client.call = () => {
      throw new UpstreamError("timeout", "Tiny did not answer within 5000 ms");
    };
    assert.equal((await live.call("add", {}, {})).outcome, "timeout");
    assert.deepEqual(metrics, [
      ["tiny", "unreachable"],
      ["tiny", "unreachable"],
      ["tiny", "timeout"],
    ]);

    // An answer while down lists again: ready, with a new generation.
    client.call = () => ({ content: [], isError: true });
    const answered = await live.call("add", {}, {});
    assert.equal(answered.outcome, "tool_error");
    await client.listed(2);
    assert.equal(live.state, "ready");
    assert.equal(live.problem, null);
    assert.equal(live.generation, ready + 2);
  } finally {
    await set.close();
  }
});

Deno.test("a listing that fails makes the upstream down, in words naming it", async () => {
  const client = new FakeClient();
  client.list = () => {
    throw new DOMException("signal timed out", "TimeoutError");
  };
  const { set, live } = start(client, { retryMs: 60_000 });
  try {
    await live.settled(1_000);
    assert.equal(live.state, "down");
    assert.equal(live.tools, null, "never listed");
    assert.equal(live.problem, "Tiny did not list its tools within 5 seconds");
    client.list = () => {
      throw new TypeError("bad JSON");
    };
    await live.refresh();
    assert.equal(live.problem, "Tiny could not be listed: bad JSON");
  } finally {
    await set.close();
  }
});

Deno.test("listing is retried with a doubling wait while it fails, then every refreshMs", async () => {
  const client = new FakeClient();
  let failures = 3;
  client.list = () => {
    if (failures-- > 0) throw new UpstreamError("unreachable", "Tiny is unreachable");
    return [tool("add")];
  };
  const { set, live } = start(client, { retryMs: 20, refreshMs: 30 });
  try {
    await client.listed(4);
    assert.equal(live.state, "ready");
    await client.listed(5);
    const [first, second, third, fourth, fifth] = client.listings as [
      number,
      number,
      number,
      number,
      number,
    ];
    // Timers never fire early (a millisecond of rounding aside).
    assert.ok(second - first >= 19, `${second - first}`);
    assert.ok(third - second >= 39, `${third - second}`);
    assert.ok(fourth - third >= 79, `${fourth - third}`);
    assert.ok(fifth - fourth >= 29, `${fifth - fourth}`);
  } finally {
    await set.close();
  }
});

/** The error lines about names the upstream does not list, as [setting, tool, nearest]. */
const unlistedLines = (logs: readonly string[]) =>
  logs.map((line) => JSON.parse(line)).filter((event) => event.setting !== undefined)
    .map((event) => [event.level, event.upstream, event.setting, event.tool, event.nearest]);

Deno.test("a gated, hidden or scoped name the upstream does not list holds all its tools, once logged", async () => {
  const client = new FakeClient();
  client.list = () => [tool("pay"), tool("secret_dump"), tool("refund"), tool("echo")];
  const { set, live, logs } = start(client, { retryMs: 60_000 }, {
    gated: new Set(["payy"]),
    hidden: new Set(["secret_dumpp"]),
    toolScopes: new Map([["refnd", "upstream.tiny.write"]]),
  });
  try {
    await live.settled(1_000);
    assert.equal(live.state, "held");
    assert.deepEqual([...live.tools!.keys()], [], "none of its tools are served");
    assert.equal(
      live.problem,
      'VESTIBULE_UPSTREAMS names tools Tiny does not list: gated "payy" (nearest listed: "pay"), ' +
        'hidden "secret_dumpp" (nearest listed: "secret_dump"), scopes "refnd" (nearest listed: ' +
        '"refund"); none of its tools are served until every name is listed',
    );
    assert.deepEqual(unlistedLines(logs), [
      ["error", "tiny", "gated", "payy", "pay"],
      ["error", "tiny", "hidden", "secret_dumpp", "secret_dump"],
      ["error", "tiny", "scopes", "refnd", "refund"],
    ]);
    assert.ok(!logs.some((line) => line.includes('"message":"upstream listed"')));
    const held = live.generation;
    await live.refresh();
    assert.equal(unlistedLines(logs).length, 3, "the same lack is logged once");
    assert.equal(live.generation, held);

    // The upstream comes to list every name: served again, hidden tools still left out.
    client.list = () => [
      tool("pay"),
      tool("payy"),
      tool("secret_dumpp"),
      tool("refnd"),
      tool("echo"),
    ];
    await live.refresh();
    assert.equal(live.state, "ready");
    assert.equal(live.problem, null);
    assert.deepEqual([...live.tools!.keys()], ["pay", "payy", "refnd", "echo"]);
    assert.ok(live.generation > held);
  } finally {
    await set.close();
  }
});

Deno.test("an upstream that stops listing a gated tool (a rename) is held from that listing, logged", async () => {
  const client = new FakeClient();
  client.list = () => [tool("pay"), tool("echo")];
  const { set, live, logs } = start(client, { retryMs: 60_000 }, { gated: new Set(["pay"]) });
  try {
    await live.settled(1_000);
    assert.equal(live.state, "ready");
    const ready = live.generation;
    client.list = () => [tool("pay_v2"), tool("echo")];
    await live.refresh();
    assert.equal(live.state, "held");
    assert.equal(live.tools!.size, 0, "neither pay_v2 (ungated) nor echo is served");
    assert.equal(live.generation, ready + 1);
    assert.deepEqual(unlistedLines(logs), [["error", "tiny", "gated", "pay", "pay_v2"]]);
  } finally {
    await set.close();
  }
});

Deno.test("a reloaded file keeps an unchanged upstream as it runs, restarts a changed one and stops a removed one", async () => {
  const clients = new Map<string, FakeClient[]>();
  const set = createUpstreamSet({
    upstreams: [
      { ...UPSTREAM, name: "kept", gated: new Set(["a", "b"]) },
      { ...UPSTREAM, name: "changed" },
      { ...UPSTREAM, name: "gone" },
    ],
  }, {
    log: () => {},
    now: Date.now,
    connect: (upstream) => {
      const client = new FakeClient();
      clients.set(upstream.name, [...clients.get(upstream.name) ?? [], client]);
      return client;
    },
  });
  try {
    const kept = set.get("kept")!;
    // Equal entries read again: new objects, sets in another order.
    const changes = await set.replace({
      upstreams: [
        { ...UPSTREAM, name: "added" },
        { ...UPSTREAM, name: "changed", timeoutMs: 9_000 },
        { ...UPSTREAM, name: "kept", gated: new Set(["b", "a"]) },
      ],
    });
    assert.deepEqual(changes, { added: ["added"], removed: ["gone"], changed: ["changed"] });
    assert.deepEqual(set.upstreams.map((live) => live.config.name), ["added", "changed", "kept"]);
    assert.equal(set.get("kept"), kept, "untouched");
    assert.equal(clients.get("kept")!.length, 1);
    assert.equal(set.get("gone"), undefined);
    assert.ok(clients.get("gone")![0]!.closed, "the removed one's client is closed");
    const [before, after] = clients.get("changed")!;
    assert.ok(before!.closed && !after!.closed, "the changed one runs a new client");
    assert.equal(set.get("changed")!.config.timeoutMs, 9_000);
  } finally {
    await set.close();
  }
});
