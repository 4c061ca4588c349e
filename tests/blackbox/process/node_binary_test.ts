// The Node.js single executable (`npm run compile`): built from the Node.js 24+ the tests find,
// copied alone into an empty directory and run there with no node_modules, no Deno and no `node`
// on PATH. `vestibule admin help` answers, a path outside ./data is refused (--permission), and
// `vestibule` serves the discovery documents, the onboarding MCP endpoint and a whole OAuth
// journey (sign-up, consent, code, tokens, the workspace MCP endpoint, refresh) from its embedded
// store (SQLite, ./data/vestibule.sqlite by default) and stops on SIGTERM; with VESTIBULE_OTEL=on
// it exports spans; it prints nothing on stderr. Built with Node.js 24 and with 26 (which imports
// the modules another way, src/runtime/sea_main.cjs). Skipped with a message without Node.js 24+.
import assert from "node:assert/strict";
import { originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";
import { outboxAt } from "../support/accounts_browser.ts";
import { rpc } from "../support/mcp_helpers.ts";
import { answersDiscoveryAndOnboarding } from "../support/node_runtime.ts";
import { assertHonoured, handOut } from "../support/oauth_helpers.ts";
import { nodeBinary } from "../../../testkit/node_binary.ts";
import { startOtlpReceiver } from "../support/otlp_receiver.ts";
import { until } from "../support/gateway_support.ts";

const node = nodeBinary();

Deno.test({
  name: "the Node.js single executable serves and runs admin commands with nothing beside it",
  ignore: node === null,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "vestibule-binary-" });
    try {
      const binary = `${dir}/vestibule`;
      const built = await new Deno.Command(node!, {
        args: ["deploy/compile_node.mjs", binary],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
      assert.deepEqual([...Deno.readDirSync(dir)].map((entry) => entry.name), ["vestibule"]);

      const origins = originsEnv();
      // No PATH: neither deno nor node can be found by the executable. No VESTIBULE_DATA: the
      // default embedded store. Mail goes to a file under ./data, the one place it may write.
      const outbox = outboxAt(`${dir}/data/outbox.jsonl`);
      const env = { ...origins, VESTIBULE_MAIL: outbox.env };
      const help = await new Deno.Command(binary, {
        args: ["admin", "help"],
        cwd: dir,
        env,
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(help.code, 0, new TextDecoder().decode(help.stderr));
      assert.match(new TextDecoder().decode(help.stdout), /^Usage: vestibule admin /);

      // It runs with Node's permission model: writing outside ./data is refused at start-up.
      const outside = await new Deno.Command(binary, {
        cwd: dir,
        env: { ...env, VESTIBULE_MAIL: `file:${dir}/outbox.jsonl` },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(outside.code, 2);
      assert.match(new TextDecoder().decode(outside.stderr), /may not read and write/);

      const spawnOptions = {
        cwd: dir,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      } as const;
      const command = new Deno.Command(binary, spawnOptions);
      const server = await startServerProcess(dir, env, command);
      try {
        await answersDiscoveryAndOnboarding(origins);
        const target = {
          auth: origins.VESTIBULE_AUTH_URL!,
          outbox,
          server: {
            baseUrl: origins.VESTIBULE_BASE_URL!,
            authUrl: origins.VESTIBULE_AUTH_URL!,
            apiUrl: origins.VESTIBULE_API_URL!,
          },
        };
        // Sign-up through the mailed link, registration, consent, the code and its tokens.
        const handed = await handOut(target);
        // The access token at the workspace MCP endpoint (and the JWKS, and a refresh).
        await assertHonoured(target, handed);
        const listed = await rpc(
          `${target.server.apiUrl}/api/mcp`,
          { jsonrpc: "2.0", id: 2, method: "tools/list" },
          {
            "MCP-Protocol-Version": "2025-11-25",
            Authorization: `Bearer ${handed.tokens.access_token}`,
          },
        );
        const tools = listed.result.tools.map((tool: { name: string }) => tool.name);
        assert.ok(tools.length > 0, "the workspace lists its tools");
      } finally {
        const stopped = await server.stop();
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stdout, /"message":"stopped"/);
        // No warning of Node's on any start (its loader, its permissions).
        assert.equal(stopped.stderr, "");
      }
      const mode = Deno.statSync(`${dir}/data/vestibule.sqlite`).mode! & 0o777;
      assert.equal(mode, 0o600, "the store is the default SQLite file, owner-only");

      // Tracing loads its packages by a name held in a variable: the executable carries them too.
      const receiver = startOtlpReceiver();
      const traced = { ...env, VESTIBULE_OTEL: "on", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
      const tracing = await startServerProcess(
        dir,
        traced,
        new Deno.Command(binary, { ...spawnOptions, env: traced }),
      );
      try {
        await (await fetch(`${origins.VESTIBULE_BASE_URL}/health`)).body?.cancel();
        await until(
          "the request's server span",
          () => receiver.spans.find((s) => s.attributes["url.path"] === "/health"),
          15_000,
        );
      } finally {
        const stopped = await tracing.stop();
        await receiver.close();
        assert.equal(stopped.code, 0, stopped.stderr);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
