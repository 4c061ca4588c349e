// `admin check --live` against the real server on loopback: every finding ok; then through a
// proxy that does not forward Host, the issuer mismatch is a fault naming the URL, exit 1.
import assert from "node:assert/strict";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { type Config, resolveConfig } from "../../../src/config/config.ts";
import { editedStaticDir } from "../support/main_process.ts";
import { rawExchange } from "../support/mcp_helpers.ts";
import { startTestServer, type TestServer } from "../support/harness.ts";
import { freePort } from "../../../testkit/ports.ts";

// Pages an operator has written: the clean bill below is not about placeholders.
const staticDir = await editedStaticDir();
globalThis.addEventListener("unload", () => Deno.removeSync(staticDir, { recursive: true }));

async function check(server: TestServer, config: Config) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdminCommand(["check", "--live"], {
    config,
    store: server.store,
    now: Date.now,
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    staticDir,
  });
  return { code, lines: out, err: err.join("\n") };
}

Deno.test("admin check --live: all ok against the server, a fault through a bad proxy", async (t) => {
  const server = await startTestServer();
  try {
    await t.step("every finding is ok", async () => {
      const { code, lines, err } = await check(server, server.config);
      assert.equal(code, 0, lines.join("\n") + err);
      assert.deepEqual(lines.filter((l) => !l.startsWith("ok ")), []);
      for (
        const url of [
          `${server.baseUrl}/llms.txt`,
          `${server.baseUrl}/index.json`,
          `${server.baseUrl}/developers.json`,
          `${server.baseUrl}/openapi.json`,
          `${server.authUrl}/.well-known/openid-configuration/api/auth`,
          `${server.authUrl}/api/auth/jwks`,
          `${server.authUrl}/mcp`,
          `${server.apiUrl}/api/mcp`,
        ]
      ) assert.ok(lines.some((l) => l.endsWith(`(${url})`)), `no line for ${url}`);
    });

    await t.step("a proxy that does not forward Host: the issuer is a fault", async () => {
      const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
        const url = new URL(request.url);
        // The upstream's own Host, as a proxy without `proxy_set_header Host` sends it.
        return fetch(`${server.authUrl}${url.pathname}${url.search}`, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          redirect: "manual",
        });
      });
      const port = proxy.addr.port;
      try {
        const proxied = resolveConfig({
          VESTIBULE_BASE_URL: server.baseUrl,
          VESTIBULE_AUTH_URL: `http://127.0.0.1:${port}`,
          VESTIBULE_API_URL: server.apiUrl,
          VESTIBULE_DATA: ":memory:",
        });
        const { code, lines, err } = await check(server, proxied);
        assert.equal(code, 1);
        assert.match(err, /fault/);
        const url = `http://127.0.0.1:${port}/.well-known/oauth-authorization-server/api/auth`;
        assert.ok(
          lines.includes(
            `fault issuer in metadata is "${server.authUrl}/api/auth" but VESTIBULE_AUTH_URL ` +
              `gives http://127.0.0.1:${port}/api/auth: is the server behind the proxy started ` +
              `with these public URLs, and does the proxy forward the Host header? (${url})`,
          ),
          lines.join("\n"),
        );
      } finally {
        await proxy.shutdown();
      }
    });

    await t.step("a Host the server does not serve: 421, with what to check", async () => {
      // A proxy that passes on its own Host, for a server started with another URL.
      // (fetch sets Host from the URL, so the request is written by hand.)
      const proxy = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen() {} },
        async (request) => {
          const answer = await rawExchange(server.baseUrl, [
            `GET ${new URL(request.url).pathname} HTTP/1.1\r\n`,
            `Host: ${request.headers.get("Host")}\r\nConnection: close\r\n\r\n`,
          ]);
          return new Response(null, { status: Number(answer.split(" ")[1]) });
        },
      );
      try {
        const proxied = resolveConfig({
          VESTIBULE_BASE_URL: `http://127.0.0.1:${proxy.addr.port}`,
          VESTIBULE_AUTH_URL: server.authUrl,
          VESTIBULE_API_URL: server.apiUrl,
          VESTIBULE_DATA: ":memory:",
        });
        const { code, lines } = await check(server, proxied);
        assert.equal(code, 1);
        assert.ok(
          lines.includes(
            "fault expected 200, got 421: the server does not serve this Host; does the proxy " +
              "forward the Host header (nginx: proxy_set_header Host $host, or $http_host when " +
              "the URL has a port), and is the server started with this URL? " +
              `(http://127.0.0.1:${proxy.addr.port}/health)`,
          ),
          lines.join("\n"),
        );
      } finally {
        await proxy.shutdown();
      }
    });

    await t.step(
      "nothing listening: the finding says why, not only that fetch failed",
      async () => {
        const port = freePort();
        const unreachable = resolveConfig({
          VESTIBULE_BASE_URL: `http://127.0.0.1:${port}`,
          VESTIBULE_AUTH_URL: server.authUrl,
          VESTIBULE_API_URL: server.apiUrl,
          VESTIBULE_DATA: ":memory:",
        });
        const { code, lines } = await check(server, unreachable);
        assert.equal(code, 1);
        const line = lines.find((l) => l.endsWith(`(http://127.0.0.1:${port}/health)`)) ?? "";
        assert.match(line, /^fault cannot reach it: .*[Cc]onnection refused/, lines.join("\n"));
        assert.doesNotMatch(line, /fetch failed|error sending request/);
      },
    );

    await t.step("a refusal the server explains: its words are in the finding", async () => {
      // The same listener under another name: the MCP endpoints refuse the Host with a reason.
      const renamed = (url: string) => url.replace("127.0.0.1", "localhost");
      const otherHost = resolveConfig({
        VESTIBULE_BASE_URL: server.baseUrl,
        VESTIBULE_AUTH_URL: renamed(server.authUrl),
        VESTIBULE_API_URL: renamed(server.apiUrl),
        VESTIBULE_DATA: ":memory:",
      });
      const { code, lines } = await check(server, otherHost);
      assert.equal(code, 1);
      const host = new URL(renamed(server.apiUrl)).host;
      assert.ok(
        lines.includes(
          `fault expected 401 without a token, got 403 ("Host \\"${host}\\" is not served ` +
            `here") (${renamed(server.apiUrl)}/api/mcp)`,
        ),
        lines.join("\n"),
      );
    });
  } finally {
    await server.close();
  }
});

Deno.test("admin check --live: MCP answers as an event stream are read too", async () => {
  const server = await startTestServer({ VESTIBULE_MCP_RESPONSE: "sse" });
  try {
    const { code, lines, err } = await check(server, server.config);
    assert.equal(code, 0, lines.join("\n") + err);
    assert.ok(lines.some((l) => l.startsWith("ok    initialize and tools/list answer")));
  } finally {
    await server.close();
  }
});
