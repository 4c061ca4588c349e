// The gateway in front of peers nobody here wrote: the official server-everything over
// Streamable HTTP and over stdio, and server-memory over stdio, behind a started Vestibule.
// Results pass unchanged (compared with the same call made straight to the upstream), progress
// streams before the result, a cancel reaches the upstream call, every call is one audit entry
// with the arguments' hash only, and nothing of Vestibule's (token, environment) goes upstream.
import assert from "node:assert/strict";
import { canonicalSha256 } from "../../../src/canonical_json.ts";
import {
  denoChildEnv,
  EVERYTHING,
  MEMORY,
  startEverythingHttp,
} from "../../../testkit/upstreams.ts";
import {
  callWithProgress,
  directCall,
  sseMessages,
  startGatewayServer,
  until,
} from "../support/gateway_support.ts";

const LOCK = new URL("../../test.lock", import.meta.url).pathname;
// Not a VESTIBULE_* name: those are settings, and an unknown one stops start-up.
const PROBE = "GATEWAY_INHERITANCE_PROBE";

/** An npm MCP server as a stdio upstream's file entry. */
function stdioEntry(name: string, title: string, specifier: string, args: string[], env: object) {
  return {
    name,
    title,
    command: Deno.execPath(),
    args: ["run", "-A", "--no-config", `--lock=${LOCK}`, specifier, ...args],
    env,
  };
}

Deno.test("server-everything and server-memory answer through the gateway unchanged", async (t) => {
  const http = await startEverythingHttp();
  const memoryDir = await Deno.makeTempDir();
  const childEnv = await denoChildEnv();
  const memoryEnv = { ...childEnv, MEMORY_FILE_PATH: `${memoryDir}/memory.jsonl` };
  // Set in this process, which is Vestibule's: a child that inherited anything would show it.
  Deno.env.set(PROBE, "must-not-reach-upstreams");
  const ws = await startGatewayServer([
    { name: "everything", title: "Everything", url: http.url, gated: ["get-sum"] },
    {
      ...stdioEntry("everything-stdio", "Everything (stdio)", EVERYTHING, ["stdio"], childEnv),
      gated: ["get-sum"],
    },
    stdioEntry("memory", "Memory", MEMORY, [], memoryEnv),
  ]);
  const { token } = await ws.token([
    "app.access",
    "upstream.everything",
    "upstream.everything-stdio",
    "upstream.memory",
  ]);
  let id = 0;
  const call = async (name: string, args: Record<string, unknown>) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200, JSON.stringify(message));
    return message.result;
  };
  const calls: { tool: string; args: Record<string, unknown> }[] = [];
  const audited = async (tool: string, args: Record<string, unknown>) => {
    calls.push({ tool, args });
    return await call(tool, args);
  };
  try {
    await t.step("tools/list shows Vestibule's own tools and every upstream's", async () => {
      const wanted = [
        "get_agent_connection_setup",
        "verify_agent_connection",
        "everything__echo",
        "everything__get-sum",
        "everything__trigger-long-running-operation",
        "everything-stdio__echo",
        "everything-stdio__get-env",
        "memory__create_entities",
        "memory__read_graph",
      ];
      const names = await until(
        "every upstream listed",
        async () => {
          const listed = await ws.toolNames(token);
          return wanted.every((name) => listed.includes(name)) && listed;
        },
        30_000,
      );
      assert.equal(new Set(names).size, names.length);
    });

    await t.step(
      "echo, structured content, an image and resource links pass unchanged",
      async () => {
        const cases: [string, Record<string, unknown>][] = [
          ["echo", { message: "héllo ✓ <b>&amp;</b>" }],
          ["get-structured-content", { location: "Chicago" }],
          ["get-tiny-image", {}],
          ["get-resource-links", { count: 4 }],
        ];
        for (const [tool, args] of cases) {
          const direct = await directCall(http.url, tool, args);
          assert.deepEqual(await audited(`everything__${tool}`, args), direct, tool);
          assert.deepEqual(await audited(`everything-stdio__${tool}`, args), direct, tool);
        }
        const image = (await directCall(http.url, "get-tiny-image", {})).content;
        assert.ok(image.some((block: { type: string }) => block.type === "image"));
        const links = (await directCall(http.url, "get-resource-links", { count: 4 })).content;
        assert.equal(links.filter((b: { type: string }) => b.type === "resource_link").length, 4);
      },
    );

    await t.step(
      "server-memory keeps what create_entities gave and read_graph returns it",
      async () => {
        const entity = { name: "Ada", entityType: "person", observations: ["wrote a program"] };
        const created = await audited("memory__create_entities", { entities: [entity] });
        assert.notEqual(created.isError, true, JSON.stringify(created));
        const graph = await audited("memory__read_graph", {});
        assert.notEqual(graph.isError, true, JSON.stringify(graph));
        assert.deepEqual(graph.structuredContent.entities, [entity]);
      },
    );

    await t.step("progress notifications stream before the result", async () => {
      const args = { duration: 2, steps: 4 };
      calls.push({ tool: "everything__trigger-long-running-operation", args });
      const response = await ws.post(
        token,
        callWithProgress(++id, "everything__trigger-long-running-operation", args),
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("Content-Type"), "text/event-stream");
      const arrivals: { at: number; message: Record<string, unknown> }[] = [];
      for await (const message of sseMessages(response)) {
        arrivals.push({ at: performance.now(), message });
      }
      const progress = arrivals.filter((a) => a.message.method === "notifications/progress");
      assert.deepEqual(
        progress.map((a) => (a.message.params as { progress: number }).progress),
        [1, 2, 3, 4],
      );
      const last = arrivals.at(-1)!;
      assert.ok("result" in last.message, JSON.stringify(last.message));
      assert.equal(arrivals.length, 5);
      // Streamed, not buffered: the first step (0.5 s) arrived long before the end (2 s).
      assert.ok(last.at - progress[0]!.at > 750, `${last.at - progress[0]!.at} ms apart`);
    });

    await t.step(
      "notifications/cancelled ends the upstream call and the audit says so",
      async () => {
        const args = { duration: 60, steps: 60 };
        calls.push({ tool: "everything__trigger-long-running-operation", args });
        const callId = ++id;
        const started = performance.now();
        const response = await ws.post(
          token,
          callWithProgress(callId, "everything__trigger-long-running-operation", args),
        );
        const messages = sseMessages(response);
        const first = await messages.next();
        assert.equal(first.value?.method, "notifications/progress");
        const cancelled = await ws.post(token, {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: callId, reason: "changed my mind" },
        });
        assert.equal(cancelled.status, 202);
        const rest: Record<string, unknown>[] = [];
        for await (const message of messages) rest.push(message);
        assert.ok(performance.now() - started < 10_000, "the stream did not end soon");
        const entry = await until(
          "the cancelled call's audit entry",
          async () =>
            (await ws.audit()).find((e) =>
              e.action === "everything__trigger-long-running-operation" &&
              e.summary.includes("(cancelled)")
            ),
        );
        assert.match(entry.summary, /was cancelled by the agent \(cancelled\)/);
      },
    );

    await t.step(
      "one audit entry per call, with the arguments' SHA-256 and never them",
      async () => {
        // An entry is committed as its answer goes out: the last may land just after it.
        const entries = await until("an audit entry for every call", async () => {
          const agent = (await ws.audit()).filter((e) => e.actor === "agent").reverse();
          return agent.length >= calls.length && agent;
        });
        assert.equal(entries.length, calls.length, entries.map((e) => e.summary).join("\n"));
        for (const [i, { tool, args }] of calls.entries()) {
          const entry = entries[i]!;
          assert.equal(entry.action, tool);
          assert.ok(
            entry.summary.endsWith(`; arguments SHA-256 ${canonicalSha256(args)}`),
            entry.summary,
          );
        }
        const text = JSON.stringify(entries);
        for (const secret of ["héllo", "Chicago", "wrote a program", "Ada"]) {
          assert.ok(!text.includes(secret), `${secret} is in the audit log`);
        }
      },
    );

    await t.step("a stdio upstream sees only the environment its file entry gave", async () => {
      const result = await call("everything-stdio__get-env", {});
      const env = JSON.parse(result.content[0].text) as Record<string, string>;
      // What Deno's npm runner adds for every npm: program; its PATH is its own shim folder.
      const { DENO_NODE_SHIM_ACTIVE, npm_config_user_agent, PATH, ...given } = env;
      assert.deepEqual(given, childEnv);
      assert.equal(DENO_NODE_SHIM_ACTIVE, "1");
      assert.match(npm_config_user_agent ?? "", /^deno\//);
      assert.equal(PATH, `${childEnv.DENO_DIR}/node_compat_bin`);
      assert.ok(!result.content[0].text.includes(token));
    });

    await t.step("a token without upstream.everything gets 403 insufficient_scope", async () => {
      const narrow = await ws.token(["app.access", "upstream.memory"]);
      const { status, response } = await ws.call(narrow.token, "everything__echo", {
        message: "hi",
      });
      assert.equal(status, 403);
      const challenge = response.headers.get("WWW-Authenticate") ?? "";
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="app\.access upstream\.memory upstream\.everything"/);
    });
  } finally {
    Deno.env.delete(PROBE);
    await ws.close();
    await http.kill();
    await Deno.remove(memoryDir, { recursive: true });
  }
});
