// mcp-remote 0.15.1 (what desktop clients run for a remote server: a stdio proxy bundling the
// SDK v2 client), unmodified, takes the whole journey: first consent, tools, an upstream tool
// (step-up), a second upstream's tool (another step-up), the first again. It prints each
// authorization URL for the person to open (its browser opener finds no display here) and waits
// on its loopback callback port, which the test, as the person's browser, follows the consent's
// redirect to. It merges the challenge's scope with what it holds, adds offline_access, and
// authorizes without refreshing.
import assert from "node:assert/strict";
import { freePorts } from "../../testkit/ports.ts";
import { assertConsents, journeyFixture, scopeSet } from "./journey_support.ts";

const MCP_REMOTE = "npm:mcp-remote@0.15.1";
const LOCK = new URL("../test.lock", import.meta.url).pathname;

Deno.test({
  name: "mcp-remote 0.15.1: every step-up reaches the person",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const j = await journeyFixture();
    const port = freePorts(1)[0]!;
    const configDir = await Deno.makeTempDir({ prefix: "vestibule-mcp-remote-" });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `--lock=${LOCK}`, MCP_REMOTE, j.mcpUrl.href, String(port)],
      // Its own config directory; no display, so it only prints the URL.
      env: { MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: "true", DISPLAY: "" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const decoder = new TextDecoder();
    let log = "";
    const lines: Record<string, unknown>[] = [];
    const reading = Promise.all([
      (async () => {
        for await (const chunk of child.stderr) log += decoder.decode(chunk);
      })(),
      (async () => {
        let buffer = "";
        for await (const chunk of child.stdout) {
          buffer += decoder.decode(chunk);
          for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
            lines.push(JSON.parse(buffer.slice(0, i)));
            buffer = buffer.slice(i + 1);
          }
        }
      })(),
    ]);
    /** Waits for something the proxy says, with a generous deadline (npm start-up included). */
    const waitFor = async <T>(what: string, probe: () => T | undefined): Promise<T> => {
      for (let i = 0; i < 1200; i++) {
        const found = probe();
        if (found !== undefined) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`mcp-remote never gave ${what}:\n${log.slice(-3000)}`);
    };
    const authorizationUrl = (n: number) =>
      waitFor(`authorization URL ${n}`, () => [...log.matchAll(/visiting:\n(\S+)/g)][n - 1]?.[1]);
    const writer = child.stdin.getWriter();
    const send = (message: unknown) =>
      writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
    // deno-lint-ignore no-explicit-any -- JSON-RPC answers the test picks apart
    const reply = (id: number): Promise<any> =>
      waitFor(`the answer to ${id}`, () => lines.find((m) => m.id === id));
    const consentAt = async (n: number) => {
      const url = await authorizationUrl(n);
      const back = await j.consentAsPresented(url);
      back.hostname = "127.0.0.1";
      // It starts its callback server as it prints the URL: wait until it says it listens.
      await waitFor(
        "its callback server",
        () => [...log.matchAll(/OAuth callback server running/g)].length >= n || undefined,
      );
      const response = await fetch(back);
      assert.equal(response.status, 200);
      await response.body?.cancel();
      return new URL(url);
    };
    const call = (id: number, name: string, a: number) =>
      send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: { a, b: 2 } } });
    try {
      await t.step("registers, the person consents, it initializes and lists", async () => {
        const first = await consentAt(1);
        assert.deepEqual(scopeSet(first.searchParams.get("scope")), [
          "app.access",
          "offline_access",
        ]);
        await send({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "desktop", version: "1" },
          },
        });
        assert.equal((await reply(1)).result.serverInfo.name, "127.0.0.1/workspace");
        await send({ jsonrpc: "2.0", method: "notifications/initialized" });
        const names: string[] = [];
        let cursor: string | undefined;
        let id = 10;
        do {
          await send({
            jsonrpc: "2.0",
            id: ++id,
            method: "tools/list",
            params: cursor === undefined ? {} : { cursor },
          });
          const page = (await reply(id)).result;
          names.push(...page.tools.map((tool: { name: string }) => tool.name));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        assert.ok(names.includes("alpha__add") && names.includes("beta__add"), names.join(" "));
      });

      await t.step("alpha__add: the step-up consent, then the answer", async () => {
        await call(2, "alpha__add", 40);
        const stepUp = await consentAt(2);
        assert.deepEqual(scopeSet(stepUp.searchParams.get("scope")), [
          "app.access",
          "offline_access",
          "upstream.alpha",
        ]);
        assert.deepEqual((await reply(2)).result.structuredContent, { sum: 42 });
      });

      await t.step("beta__add: another step-up keeps alpha", async () => {
        await call(3, "beta__add", 40);
        const stepUp = await consentAt(3);
        assert.deepEqual(scopeSet(stepUp.searchParams.get("scope")), [
          "app.access",
          "offline_access",
          "upstream.alpha",
          "upstream.beta",
        ]);
        assert.deepEqual((await reply(3)).result.structuredContent, { sum: 42 });
      });

      await t.step("alpha__add again, with no consent", async () => {
        await call(4, "alpha__add", 1);
        assert.deepEqual((await reply(4)).result.structuredContent, { sum: 3 });
        assert.equal([...log.matchAll(/visiting:\n/g)].length, 3);
        assertConsents(j.consents, ["offline_access"]);
      });
    } finally {
      await writer.close().catch(() => {});
      child.kill();
      await child.status;
      await reading.catch(() => {});
      await j.close();
      await Deno.remove(configDir, { recursive: true });
    }
  },
});
