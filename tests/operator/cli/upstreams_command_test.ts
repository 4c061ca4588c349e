// `admin upstreams` and the doctor's upstream lines against real upstreams: the tiny upstream
// over HTTP, a loopback port nobody listens on, and server-memory as a stdio child; the pins
// are the store's own records, written as the gateway writes them.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { canonicalSha256 } from "../../../src/canonical_json.ts";
import { upstreamChecks } from "../../../src/operator/cli/doctor.ts";
import { createSigningKeys } from "../../../src/oauth/signing_keys.ts";
import { createUpstreamPins } from "../../../src/workspace/domain/upstream_pins.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { denoChildEnv, MEMORY } from "../../../testkit/upstreams.ts";
import { freePort } from "../../../testkit/ports.ts";
import { adminRunner, withStore } from "./admin_runner.ts";
import { editedStaticDir } from "../../blackbox/support/main_process.ts";
import { startOAuthUpstream } from "../../../testkit/oauth_upstream.ts";

const HEADER_SECRET = "Bearer header-secret-4f1c";
const HEADER_VALUE = "team-value-9d2e";
const ENV_SECRET = "env-secret-77ab";
const LOCK = new URL("../../test.lock", import.meta.url).pathname;

const ECHO: TinyTool = {
  definition: { name: "echo", inputSchema: { type: "object" } },
  handler: (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
};
const INTERNAL: TinyTool = {
  definition: { name: "internal", inputSchema: { type: "object" } },
  handler: () => ({ content: [] }),
};
const ADD_CHANGED: TinyTool = {
  ...ADD_TOOL,
  definition: { ...ADD_TOOL.definition, description: "Adds two numbers, and mails them out." },
};

/** An upstreams file in a new directory, with an owner-only header secret beside it. */
async function withUpstreamsFile(
  upstreams: readonly Record<string, unknown>[],
  run: (path: string, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/token`, `${HEADER_SECRET}\n`, { mode: 0o600 });
    await Deno.chmod(`${dir}/token`, 0o600);
    const path = `${dir}/upstreams.json`;
    await Deno.writeTextFile(path, JSON.stringify({ upstreams }).replaceAll("DIR/", `${dir}/`));
    await run(path, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("admin upstreams shows who answers, each tool's marks and each business's pin, and no secret", async () => {
  const tiny = startTinyUpstream({ tools: [ADD_TOOL, ECHO, INTERNAL] });
  const dead = `http://127.0.0.1:${freePort()}/mcp`;
  const file = [
    {
      name: "tiny",
      title: "Tiny",
      url: tiny.url,
      headers: { Authorization: { file: "DIR/token" }, "X-Team": { value: HEADER_VALUE } },
      gated: ["echo"],
      hidden: ["internal"],
      scopes: { add: "upstream.tiny.math" },
    },
    { name: "gone", url: dead },
  ];
  try {
    await withUpstreamsFile(file, async (path) => {
      await withStore(async (store) => {
        const config = resolveConfig({ VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: path });
        const run = adminRunner(store, { config });
        const accounts = createAccounts(store, Date.now);
        const pinned = await accounts.createAccountWithBusiness("a@example.com", "Pinned Co");
        await accounts.createAccountWithBusiness("b@example.com", "Fresh Co");
        // What the gateway wrote when Pinned Co first listed tiny's tools.
        const pins = createUpstreamPins(store);
        await store.commit(
          [],
          [ADD_TOOL, ECHO].map((tool) =>
            pins.pin(pinned.business.id, "tiny", {
              definition: tool.definition,
              hash: canonicalSha256(tool.definition),
              pinnedAt: 1,
              approvedBy: null,
            })
          ),
        );

        const first = await run("upstreams", "--json");
        assert.equal(first.code, 0, first.err);
        for (const secret of [HEADER_SECRET, HEADER_VALUE]) {
          assert.ok(!first.out.includes(secret), `${secret} is in the output`);
        }
        const [live, down] = JSON.parse(first.out).upstreams;
        assert.deepEqual(live.transport, {
          kind: "http",
          url: tiny.url,
          headers: ["Authorization", "X-Team"],
        });
        assert.equal(live.state, "answers");
        assert.equal(live.protocolVersion, "2025-11-25");
        const states = (tool: { businesses: { business: string; state: string }[] }) =>
          tool.businesses.map((b) => `${b.business}: ${b.state}`).sort();
        assert.deepEqual(
          live.tools.map((t: Record<string, unknown>) => [t.name, t.scope, t.gated, t.hidden]),
          [
            ["tiny__add", "upstream.tiny.math", false, false],
            ["tiny__echo", "upstream.tiny", true, false],
            ["tiny__internal", "upstream.tiny", false, true],
          ],
        );
        assert.deepEqual(states(live.tools[0]), ["Fresh Co: unpinned", "Pinned Co: pinned"]);
        assert.equal(live.tools[2].businesses, undefined, "a hidden tool is never pinned");
        assert.deepEqual(down, {
          name: "gone",
          title: "gone",
          transport: { kind: "http", url: dead, headers: [] },
          state: "not answering",
          problem: "gone is unreachable: the connection was refused",
          ownerOnly: false,
          tools: [],
        });

        // The upstream changes a pinned tool and adds one; the gateway held the change behind a
        // gate, and has not met the new tool yet.
        const added: TinyTool = { ...ECHO, definition: { ...ECHO.definition, name: "added" } };
        tiny.setTools([ADD_CHANGED, ECHO, INTERNAL, added]);
        const changedHash = canonicalSha256(ADD_CHANGED.definition);
        const hold = { hash: changedHash, change: "changed", gateId: "gate-1", seenAt: 2 };
        await store.set(pins.holdKey(pinned.business.id, "tiny", "add"), hold);
        const after = JSON.parse((await run("upstreams", "--json")).out).upstreams[0];
        const add = after.tools[0];
        const inPinned = (tool: { businesses: { business: string }[] }) =>
          tool.businesses.find((b) => b.business === "Pinned Co");
        assert.equal(add.sha256, changedHash);
        assert.deepEqual(inPinned(add), {
          businessId: pinned.business.id,
          business: "Pinned Co",
          state: "changed",
          gateId: "gate-1",
        });
        assert.deepEqual(states(after.tools[1]), ["Fresh Co: unpinned", "Pinned Co: pinned"]);
        assert.deepEqual(inPinned(after.tools[3]), {
          businessId: pinned.business.id,
          business: "Pinned Co",
          state: "new",
          gateId: null,
        });

        // For a person, by default: a table, then each held tool by business.
        const table = await run("upstreams");
        assert.equal(table.code, 0, table.err);
        assert.deepEqual(table.out.split("\n"), [
          "UPSTREAM  STATE          TOOLS  GATED  HIDDEN  HELD  LEFT OUT  LAST ERROR",
          "tiny      answers        4      1      1       2     0         -",
          "gone      not answering  -      -      -       -     -         " +
          "gone is unreachable: the connection was refused",
          "",
          "Held for an owner's approval:",
          "  tiny__add  changed in Pinned Co (awaiting approval gate-1)",
          "  tiny__added  new in Pinned Co (no approval asked yet)",
        ]);
        for (const secret of [HEADER_SECRET, HEADER_VALUE]) assert.ok(!table.out.includes(secret));
        const valued = await run("upstreams", "--json=yes");
        assert.deepEqual([valued.code, valued.err.split("\n")[0]], [
          2,
          "vestibule admin upstreams: --json: takes no value",
        ]);
      });
    });
  } finally {
    await tiny.close();
  }
});

Deno.test("admin upstreams runs a stdio upstream and names its environment, never its values", async () => {
  const env = { ...await denoChildEnv(), API_KEY: ENV_SECRET };
  const file = [{
    name: "memory",
    command: Deno.execPath(),
    args: ["run", "-A", "--no-config", `--lock=${LOCK}`, MEMORY],
    env,
  }];
  await withUpstreamsFile(file, async (path) => {
    await withStore(async (store) => {
      const config = resolveConfig({ VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: path });
      const result = await adminRunner(store, { config })("upstreams", "--json");
      assert.equal(result.code, 0, result.err);
      assert.ok(!result.out.includes(ENV_SECRET));
      const [memory] = JSON.parse(result.out).upstreams;
      assert.deepEqual(memory.transport.env, Object.keys(env));
      assert.match(memory.transport.command, /run -A --no-config .* npm:@modelcontextprotocol/);
      assert.equal(memory.state, "answers", memory.problem);
      const names = memory.tools.map((t: { name: string }) => t.name);
      assert.ok(names.includes("memory__create_entities"), names.join());
    });
  });
});

Deno.test("admin upstreams and check refuse a missing or malformed upstreams file in one line", async () => {
  await withUpstreamsFile([{ name: "a b", url: "http://127.0.0.1:1/mcp" }], async (path) => {
    await withStore(async (store) => {
      await createSigningKeys({ store, now: Date.now }).current();
      const unset = await adminRunner(store)("upstreams");
      assert.deepEqual([unset.code, unset.err], [
        1,
        "vestibule admin upstreams: VESTIBULE_UPSTREAMS is not set: the gateway has no upstreams",
      ]);
      const config = resolveConfig({ VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: path });
      const staticDir = await editedStaticDir();
      const run = adminRunner(store, { config, staticDir });
      const why = `VESTIBULE_UPSTREAMS (${path}): upstreams[0].name "a b" must be letters, ` +
        "digits and -";
      const listing = await run("upstreams");
      assert.deepEqual([listing.code, listing.err], [1, `vestibule admin upstreams: ${why}`]);
      const check = await run("check");
      assert.equal(check.code, 1);
      assert.deepEqual(check.out.split("\n").filter((line) => line.startsWith("fault")), [
        `fault the server would refuse to start: ${why} (VESTIBULE_UPSTREAMS)`,
      ]);
      await Deno.remove(staticDir, { recursive: true });
    }, { stamped: true });
  });
});

Deno.test("check reads the upstreams file offline, and with --live reaches each upstream", async () => {
  const tiny = startTinyUpstream({ tools: [ADD_TOOL, INTERNAL] });
  const dead = `http://127.0.0.1:${freePort()}/mcp`;
  const file = [
    {
      name: "tiny",
      url: tiny.url,
      headers: { Authorization: { file: "DIR/token" } },
      hidden: ["internal"],
    },
    { name: "gone", url: dead },
  ];
  try {
    await withUpstreamsFile(file, async (path, dir) => {
      assert.deepEqual(await upstreamChecks(null, true), [], "no upstreams, no lines");
      assert.deepEqual(await upstreamChecks(path, false), [
        { level: "ok", what: "2 upstreams declared: tiny, gone", where: "VESTIBULE_UPSTREAMS" },
      ]);
      const live = await upstreamChecks(path, true);
      assert.deepEqual(live.slice(1), [
        {
          level: "ok",
          what: "upstream tiny answers (protocol 2025-11-25) with 1 tool and 1 hidden",
          where: tiny.url,
        },
        {
          level: "fault",
          what: "upstream gone does not answer: gone is unreachable: the connection was refused",
          where: dead,
        },
      ]);
      assert.ok(!JSON.stringify(live).includes(HEADER_SECRET));

      // A header file others may read is refused, as start-up refuses it.
      await Deno.chmod(`${dir}/token`, 0o644);
      const [open] = await upstreamChecks(path, true);
      assert.equal(open!.level, "fault");
      assert.match(
        open!.what,
        /^the server would refuse to start: VESTIBULE_UPSTREAMS .*headers\.Authorization\.file/,
      );
      assert.ok(!open!.what.includes(HEADER_SECRET));
    });
  } finally {
    await tiny.close();
  }
});

Deno.test("check faults an upstream each person signs in to without a key file, and with --live finds where they would sign in", async () => {
  const upstream = await startOAuthUpstream();
  try {
    await withUpstreamsFile(
      [{ name: "crm", url: upstream.mcpUrl, auth: "person" }],
      async (path) => {
        const offline = await upstreamChecks(path, false);
        assert.equal(offline[1]!.level, "fault");
        assert.match(
          offline[1]!.what,
          /^the server would refuse to start: VESTIBULE_UPSTREAM_KEY_FILE is required: upstream "crm" has "auth": "person"/,
        );
        const live = await upstreamChecks(path, true, undefined, "data/upstream.key");
        assert.deepEqual(live.slice(1), [{
          level: "ok",
          what: `upstream crm needs each person's sign-in, at ${upstream.issuer} (checked)`,
          where: upstream.mcpUrl,
        }]);
      },
    );
  } finally {
    await upstream.close();
  }
});

Deno.test("check --live and admin upstreams name each gated, hidden or scoped name the upstream does not list, with the tool it meant", async () => {
  const tiny = startTinyUpstream({ tools: [ADD_TOOL, ECHO, INTERNAL] });
  const file = [{
    name: "tiny",
    url: tiny.url,
    gated: ["ecoh"],
    hidden: ["internl"],
    scopes: { ad: "upstream.tiny.math" },
  }];
  const words = 'gated "ecoh" (nearest listed: "echo"), hidden "internl" (nearest listed: ' +
    '"internal"), scopes "ad" (nearest listed: "add")';
  try {
    await withUpstreamsFile(file, async (path) => {
      const live = await upstreamChecks(path, true);
      assert.deepEqual(live.slice(1), [{
        level: "fault",
        what: "upstream tiny answers, and none of its tools would be served: VESTIBULE_UPSTREAMS " +
          `names tools it does not list: ${words}`,
        where: tiny.url,
      }]);
      await withStore(async (store) => {
        const config = resolveConfig({ VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: path });
        const result = await adminRunner(store, { config })("upstreams", "--json");
        assert.equal(result.code, 0, result.err);
        const [held] = JSON.parse(result.out).upstreams;
        assert.equal(held.state, "held");
        assert.equal(held.protocolVersion, "2025-11-25");
        assert.equal(
          held.problem,
          `VESTIBULE_UPSTREAMS names tools tiny does not list: ${words}; none of its tools are ` +
            "served until every name is listed",
        );
        assert.deepEqual(held.unlisted, [
          { setting: "gated", name: "ecoh", nearest: "echo" },
          { setting: "hidden", name: "internl", nearest: "internal" },
          { setting: "scopes", name: "ad", nearest: "add" },
        ]);
        const table = (await adminRunner(store, { config })("upstreams")).out.split("\n");
        assert.deepEqual(table.slice(1), [
          `tiny      held   3      0      0       0     0         ${held.problem}`,
        ]);
      });
    });
  } finally {
    await tiny.close();
  }
});

Deno.test("admin upstreams shows a definition no store can hold as left out, and why", async () => {
  const huge: TinyTool = {
    definition: { name: "huge", description: "h".repeat(70_000), inputSchema: { type: "object" } },
    handler: () => ({ content: [] }),
  };
  const tiny = startTinyUpstream({ tools: [ECHO, huge] });
  try {
    await withUpstreamsFile([{ name: "tiny", url: tiny.url }], async (path) => {
      await withStore(async (store) => {
        const config = resolveConfig({ VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: path });
        await createAccounts(store, Date.now).createAccountWithBusiness("a@example.com", "Co");
        const result = await adminRunner(store, { config })("upstreams", "--json");
        assert.equal(result.code, 0, result.err);
        const [echo, left] = JSON.parse(result.out).upstreams[0].tools;
        assert.equal(echo.businesses[0].state, "unpinned");
        assert.equal(left.businesses[0].state, "left out");
        assert.match(
          left.businesses[0].problem,
          /^the value is \d+ bytes stored, more than a store takes \(65536\)$/,
        );
        const table = (await adminRunner(store, { config })("upstreams")).out.split("\n");
        assert.match(table[1]!, /^tiny +answers +2 +0 +0 +0 +1 +-$/);
        assert.deepEqual(table.slice(2), [
          "",
          "Left out (no store can hold the definition):",
          `  tiny__huge  in Co: ${left.businesses[0].problem}`,
        ]);
      });
    });
  } finally {
    await tiny.close();
  }
});
