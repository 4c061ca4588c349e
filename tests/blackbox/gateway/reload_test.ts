// Reloading the upstreams file without a restart: main.ts as a process, sent SIGHUP as
// `systemctl reload` does (deploy/vestibule.service), with stdio children whose pids the test
// reads from their own answers. A good file starts, stops and restarts upstreams; a bad one is
// refused whole with start-up's line; pins and tokens carry over (issue 35, point 2).
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { prepareSchema } from "../../../src/schema.ts";
import { openStore } from "../../../src/store/open.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { denoChildEnv } from "../../../testkit/upstreams.ts";
import { copyProject, originsEnv, startServerProcess } from "../support/main_process.ts";
import { until } from "../support/gateway_support.ts";
import { PROTOCOL_VERSION, rpcMessage, type RpcResult } from "../support/workspace_support.ts";
import { stdioChildScript } from "../../../testkit/stdio_child.ts";
import { storeFile } from "../support/server_runtime.ts";

/** A stdio MCP server: one tool, `ping`, described by its first argument, answering its pid. */
const PING_CHILD = stdioChildScript(`
if (message.method === "initialize") {
  reply({ protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "ping", version: "0" } });
} else if (message.method === "tools/list") {
  reply({ tools: [{ name: "ping", description: Deno.args[0], inputSchema: { type: "object" } }] });
} else if (message.method === "tools/call") {
  reply({ content: [{ type: "text", text: String(Deno.pid) }] });
}
`);

/** Whether a process with this id still exists (Linux). */
async function alive(pid: number): Promise<boolean> {
  return await Deno.stat(`/proc/${pid}`).then(() => true, () => false);
}

Deno.test("SIGHUP reloads the upstreams file: good files apply, a bad one is refused whole", async (t) => {
  const dir = await copyProject();
  const script = await Deno.makeTempFile({ suffix: ".js" });
  await Deno.writeTextFile(script, PING_CHILD);
  const tiny = startTinyUpstream({});
  const childEnv = await denoChildEnv();
  const ping = (name: string, description: string) => ({
    name,
    title: `Ping ${name}`,
    command: Deno.execPath(),
    args: ["run", "--no-config", script, description],
    env: childEnv,
  });
  const added = { name: "added", title: "Added", url: tiny.url };
  const file = `${dir}/data/upstreams.json`;
  const write = (upstreams: unknown[]) => Deno.writeTextFile(file, JSON.stringify({ upstreams }));
  const env = {
    ...originsEnv(),
    VESTIBULE_DATA: storeFile(`${dir}/data/store`),
    VESTIBULE_UPSTREAMS: "data/upstreams.json",
    VESTIBULE_RATE_LIMITS: "off",
  };
  try {
    await Deno.mkdir(`${dir}/data`);
    await write([ping("gone", "Pings."), ping("changed", "Pings.")]);
    // The owner and an agent's token, stored before the server starts: the token already holds
    // the scope of an upstream the file does not name yet.
    const config = resolveConfig(env);
    const store = await openStore(config);
    let token: string;
    try {
      await prepareSchema(store, Date.now);
      const { account, business } = await createAccounts(store, Date.now)
        .createAccountWithBusiness("owner@example.com", "Acme Outdoor");
      const { tokens } = await issueGrant({ config, store, now: Date.now }, {
        accountId: account.id,
        businessId: business.id,
        clientId: "agent",
        scopes: ["app.access", "upstream.gone", "upstream.changed", "upstream.added"],
      });
      token = tokens.access_token;
    } finally {
      await store.close();
    }
    const server = await startServerProcess(dir, env);
    let id = 0;
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<RpcResult> => {
      const response = await fetch(`${config.apiUrl}/api/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          "MCP-Protocol-Version": PROTOCOL_VERSION,
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name, arguments: args },
        }),
      });
      assert.equal(response.status, 200);
      return await rpcMessage(response);
    };
    // A child just started may take a while to list its tools on a busy machine: asked again
    // until it answers.
    const pidOf = async (name: string) => {
      const answer = await until(`${name} to answer`, async () => {
        const answer = await call(name);
        return answer.result?.isError === undefined && answer.result?.content ? answer : null;
      });
      return Number(answer.result.content[0].text);
    };
    const failed = (answer: RpcResult) => answer.error !== undefined || answer.result.isError;
    let stopped = false;
    try {
      const gonePid = await pidOf("gone__ping");
      const changedPid = await pidOf("changed__ping");
      assert.ok(failed(await call("added__add", { a: 1, b: 2 })));

      await t.step("a good file: added, removed and changed upstreams", async () => {
        await write([ping("changed", "Pings, now differently."), added]);
        const sent = performance.now();
        Deno.kill(server.pid, "SIGHUP");
        const line = JSON.parse(await server.waitForLine(/"message":"upstreams reloaded"/));
        const seconds = (performance.now() - sent) / 1000;
        assert.deepEqual(
          [line.added, line.removed, line.changed],
          [["added"], ["gone"], ["changed"]],
        );
        // The line is written once the stopped upstreams' children have exited.
        assert.ok(seconds < 10, `${seconds} s`);
        assert.equal(await alive(gonePid), false, "the removed upstream's child has exited");
        assert.equal(await alive(changedPid), false, "the changed upstream's old child has exited");
        // The token issued before the reload reaches the added upstream's tools.
        const sum = await call("added__add", { a: 1, b: 2 });
        assert.deepEqual(sum.result.structuredContent, { sum: 3 }, JSON.stringify(sum));
        assert.ok(failed(await call("gone__ping")));
        // The consent page and the metadata offer the scopes of the file as reloaded.
        const metadata = await (await fetch(
          `${config.authUrl}/.well-known/oauth-authorization-server/api/auth`,
        )).json();
        assert.ok(metadata.scopes_supported.includes("upstream.added"));
        assert.ok(!metadata.scopes_supported.includes("upstream.gone"));
        // The pin of the first listing survived: the new child's changed definition is held.
        await until("changed__ping held as changed since an owner approved it", async () => {
          const held = await call("changed__ping");
          return held.result?.isError &&
            /changed the tool ping since an owner approved/.test(held.result.content[0].text);
        });
      });

      await t.step("a bad file is refused whole, in start-up's words; all goes on", async () => {
        await write([{ nmae: "typo", url: tiny.url }, ping("changed", "Pings.")]);
        Deno.kill(server.pid, "SIGHUP");
        const line = JSON.parse(await server.waitForLine(/upstreams file refused/));
        assert.equal(line.level, "error");
        assert.match(
          line.message,
          /VESTIBULE_UPSTREAMS \(data\/upstreams\.json\): upstreams\[0\]\.nmae is not a known field/,
        );
        const sum = await call("added__add", { a: 2, b: 2 });
        assert.deepEqual(sum.result.structuredContent, { sum: 4 });
      });

      await t.step("an upstream that comes back serves the token that held its scope", async () => {
        await write([ping("changed", "Pings, now differently."), added, ping("gone", "Pings.")]);
        Deno.kill(server.pid, "SIGHUP");
        await server.waitForLine(/"message":"upstreams reloaded","added":\["gone"\]/);
        const pid = await pidOf("gone__ping");
        assert.notEqual(pid, gonePid);
      });

      const { code, stdout, stderr } = await server.stop();
      stopped = true;
      assert.equal(code, 0, stderr);
      // One line per refused file, and SIGHUP never ended the process.
      assert.equal(
        stdout.split("\n").filter((l) => l.includes("upstreams file refused")).length,
        1,
      );
    } finally {
      if (!stopped) await server.stop();
    }
  } finally {
    await tiny.close();
    await Deno.remove(script);
    await Deno.remove(dir, { recursive: true });
  }
});
