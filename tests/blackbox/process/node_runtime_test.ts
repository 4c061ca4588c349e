// The server on Node.js, started as `npm start` starts it (package.json's flags, --permission),
// answers the discovery documents and the onboarding MCP endpoint like the Deno one. Needs a
// Node.js 24 or later (TEST_NODE_BINARY, else `node` on PATH) and `npm ci` run in the
// checkout; .ci/run provides both. Without them the test is skipped with a message.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";
import { answersDiscoveryAndOnboarding, npmStartCommand } from "../support/node_runtime.ts";
import { nodeBinary } from "../../../testkit/node_binary.ts";

const node = nodeBinary();

Deno.test({
  name: "on Node.js the server answers the discovery documents and the onboarding MCP endpoint",
  ignore: node === null,
  async fn() {
    const cluster = await startPgCluster();
    try {
      const origins = originsEnv();
      const env = {
        NO_COLOR: "1",
        ...origins,
        VESTIBULE_DATA: await cluster.database(),
        VESTIBULE_MAIL: "log",
      };
      const command = await npmStartCommand(node!, env);
      const server = await startServerProcess(ROOT.pathname, env, command);
      try {
        await answersDiscoveryAndOnboarding(origins);
      } finally {
        const stopped = await server.stop();
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stdout, /"message":"stopped"/);
      }
    } finally {
      await cluster.stop();
    }
  },
});
