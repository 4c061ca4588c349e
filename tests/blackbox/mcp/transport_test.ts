// The onboarding MCP endpoint over real HTTP: every transport rule, status and body.
import assert from "node:assert/strict";
import { manualClock } from "../../store/store_contract.ts";
import { startTestServer } from "../support/harness.ts";
import {
  INITIALIZE,
  MCP_HEADERS,
  mcpPost,
  rawExchange,
  readMessages,
  rpc,
  withServer,
} from "../support/mcp_helpers.ts";

const PING = { jsonrpc: "2.0", id: 1, method: "ping" };

async function assertRpcError(
  response: Response,
  status: number,
  message: RegExp,
  code?: number,
  id: string | number | null = null,
) {
  assert.equal(response.status, status);
  assert.equal(response.headers.get("Content-Type"), "application/json");
  const body = await response.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, id);
  if (code !== undefined) assert.equal(body.error.code, code);
  assert.match(body.error.message, message);
  return body;
}

Deno.test("onboarding MCP: lifecycle and the version rule over HTTP", async (t) => {
  await withServer({}, async (_server, mcp) => {
    const versions = [
      { asked: "2025-11-25", got: "2025-11-25" },
      { asked: "2025-06-18", got: "2025-06-18" },
      { asked: "2024-11-05", got: "2025-11-25" },
    ];
    for (const v of versions) {
      await t.step(`initialize asking ${v.asked} negotiates ${v.got}`, async () => {
        const response = await mcpPost(mcp, {
          ...INITIALIZE,
          params: { ...INITIALIZE.params, protocolVersion: v.asked },
        }, {});
        assert.equal(response.status, 200);
        assert.equal(response.headers.get("Mcp-Session-Id"), null, "stateless: no session issued");
        const { result } = (await readMessages(response))[0]!;
        assert.equal(result.protocolVersion, v.got);
        assert.deepEqual(result.capabilities, { tools: { listChanged: false } });
        assert.deepEqual(Object.keys(result.serverInfo).sort(), [
          "description",
          "name",
          "title",
          "version",
        ]);
        assert.equal(typeof result.instructions, "string");
      });
    }

    await t.step("initialize with a bad clientInfo is -32602 naming the field", async () => {
      const body = await rpc(mcp, {
        ...INITIALIZE,
        params: { ...INITIALIZE.params, clientInfo: { name: "x" } },
      }, {});
      assert.equal(body.error.code, -32602);
      assert.match(body.error.message, /"params\.clientInfo\.version"/);
    });

    await t.step("notifications/initialized is 202 with an empty body", async () => {
      const response = await mcpPost(mcp, { jsonrpc: "2.0", method: "notifications/initialized" });
      assert.equal(response.status, 202);
      assert.equal(await response.text(), "");
    });

    await t.step("a notification without MCP-Protocol-Version is 400, not 202", async () => {
      await assertRpcError(
        await mcpPost(mcp, { jsonrpc: "2.0", method: "notifications/initialized" }, {}),
        400,
        /MCP-Protocol-Version header is missing; supported versions: 2026-07-28, 2025-11-25/,
        -32020,
      );
    });

    await t.step("tools/list without MCP-Protocol-Version is 400 naming the versions", async () => {
      await assertRpcError(
        await mcpPost(mcp, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {}),
        400,
        /MCP-Protocol-Version header is missing; supported versions: 2026-07-28, 2025-11-25, 2025-06-18/,
        -32020,
        2,
      );
    });

    await t.step(
      "an unsupported MCP-Protocol-Version is 400 UnsupportedProtocolVersion",
      async () => {
        const body = await assertRpcError(
          await mcpPost(mcp, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
            "MCP-Protocol-Version": "2025-03-26",
          }),
          400,
          /"2025-03-26" is not supported/,
          -32022,
          2,
        );
        assert.deepEqual(body.error.data, {
          supported: ["2026-07-28", "2025-11-25", "2025-06-18"],
          requested: "2025-03-26",
        });
      },
    );

    await t.step("both supported versions are accepted on later requests", async () => {
      for (const version of ["2025-11-25", "2025-06-18"]) {
        const body = await rpc(mcp, PING, { "MCP-Protocol-Version": version });
        assert.deepEqual(body, { jsonrpc: "2.0", id: 1, result: {} });
      }
    });

    await t.step("an unknown method is -32601 with 200", async () => {
      const body = await rpc(mcp, { jsonrpc: "2.0", id: "m", method: "prompts/list" });
      assert.deepEqual(body.error, { code: -32601, message: 'Method not found: "prompts/list"' });
      assert.equal(body.id, "m");
    });
  });
});

Deno.test("onboarding MCP: every transport error status carries a JSON-RPC body", async (t) => {
  await withServer(
    { VESTIBULE_TRUSTED_ORIGINS: "https://console.example.com" },
    async (server, mcp) => {
      await t.step("GET is 405 with Allow: POST, OPTIONS", async () => {
        const response = await fetch(mcp);
        assert.equal(response.headers.get("Allow"), "POST, OPTIONS");
        await assertRpcError(response, 405, /use POST/);
      });

      await t.step(
        "a method nobody routes (PROPFIND) is 405 with a JSON-RPC body too",
        async () => {
          const response = await fetch(mcp, { method: "PROPFIND" });
          assert.equal(response.headers.get("Allow"), "POST, OPTIONS");
          await assertRpcError(response, 405, /PROPFIND is not supported; use POST/);
        },
      );

      await t.step("HEAD is 405 without a body", async () => {
        const response = await fetch(mcp, { method: "HEAD" });
        assert.equal(response.status, 405);
        assert.equal(response.headers.get("Allow"), "POST, OPTIONS");
      });

      await t.step("a form body is 415", async () => {
        const response = await fetch(mcp, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            Accept: MCP_HEADERS.Accept,
          },
          body: "a=1",
        });
        await assertRpcError(response, 415, /Content-Type must be application\/json/, -32000);
      });

      await t.step("Accept: application/json alone is 406", async () => {
        await assertRpcError(
          await mcpPost(mcp, PING, { Accept: "application/json" }),
          406,
          /text\/event-stream/,
        );
      });

      await t.step("Accept: text/event-stream alone is 406", async () => {
        await assertRpcError(
          await mcpPost(mcp, PING, { Accept: "text/event-stream" }),
          406,
          /Accept must list both application\/json and text\/event-stream/,
          -32000,
        );
      });

      await t.step("no Accept at all is 406", async () => {
        // fetch would send Accept: */*; only the wire can leave the field out.
        const body = JSON.stringify(PING);
        const text = await rawExchange(mcp, [
          `POST /mcp HTTP/1.1\r\nHost: ${new URL(mcp).host}\r\nContent-Type: application/json\r\n` +
          `MCP-Protocol-Version: 2025-11-25\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
        ]);
        assert.match(text, /^HTTP\/1\.1 406/);
        assert.match(text, /"id":null,"error":\{"code":-32000,"message":"Not Acceptable/);
      });

      await t.step("wildcards do not stand for either type: 406", async () => {
        for (
          const accept of [
            "application/json, text/*",
            "application/*, text/event-stream",
            "*/*, text/event-stream",
          ]
        ) {
          await assertRpcError(
            await mcpPost(mcp, PING, { Accept: accept }),
            406,
            /Accept must list both/,
            -32000,
          );
        }
      });

      await t.step("a type that only begins with application/json is 415", async () => {
        for (const type of ["application/json-seq", "application/jsonl", "application/json5"]) {
          await assertRpcError(
            await mcpPost(mcp, PING, { "Content-Type": type }),
            415,
            /Content-Type must be application\/json/,
            -32000,
          );
        }
      });

      await t.step(
        "media types are compared without regard to case (RFC 9110 §8.3.1)",
        async () => {
          const body = await rpc(mcp, PING, {
            "Content-Type": "Application/JSON; charset=UTF-8",
            Accept: "Application/Json, Text/Event-Stream",
            "MCP-Protocol-Version": "2025-11-25",
          });
          assert.deepEqual(body, { jsonrpc: "2.0", id: 1, result: {} });
        },
      );

      await t.step("an untrusted Origin is 403", async () => {
        await assertRpcError(
          await mcpPost(mcp, PING, { Origin: "http://attacker.example" }),
          403,
          /origin "http:\/\/attacker.example" is not trusted/,
        );
      });

      await t.step(
        "an origin that only begins like a trusted one is 403, preflight too",
        async () => {
          for (
            const origin of [
              "https://console.example.com.attacker.example",
              "https://console.example.com:8443",
              "https://console.example.comx",
            ]
          ) {
            await assertRpcError(await mcpPost(mcp, PING, { Origin: origin }), 403, /not trusted/);
            const preflight = await fetch(mcp, {
              method: "OPTIONS",
              headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
            });
            assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), null, origin);
            await assertRpcError(preflight, 403, /not trusted/);
          }
        },
      );

      await t.step("a configured trusted Origin is served with CORS", async () => {
        const response = await mcpPost(mcp, PING, {
          Origin: "https://console.example.com",
          "MCP-Protocol-Version": "2025-11-25",
        });
        assert.equal(response.status, 200);
        assert.equal(
          response.headers.get("Access-Control-Allow-Origin"),
          "https://console.example.com",
        );
        await response.body?.cancel();
      });

      await t.step("the server's own origins are trusted", async () => {
        for (const origin of [server.baseUrl, server.authUrl, server.apiUrl]) {
          const response = await mcpPost(mcp, PING, {
            Origin: origin,
            "MCP-Protocol-Version": "2025-11-25",
          });
          assert.equal(response.status, 200, origin);
          await response.body?.cancel();
        }
      });

      await t.step("CORS preflight: trusted origin 204, other origin 403", async () => {
        const ok = await fetch(mcp, {
          method: "OPTIONS",
          headers: {
            Origin: "https://console.example.com",
            "Access-Control-Request-Method": "POST",
          },
        });
        assert.equal(ok.status, 204);
        assert.match(ok.headers.get("Access-Control-Allow-Headers")!, /MCP-Protocol-Version/);
        const refused = await fetch(mcp, {
          method: "OPTIONS",
          headers: { Origin: "http://attacker.example", "Access-Control-Request-Method": "POST" },
        });
        await assertRpcError(refused, 403, /not trusted/);
      });

      await t.step("an unknown Host (DNS rebinding) is 403 with a JSON-RPC body", async () => {
        const body = JSON.stringify(PING);
        const text = await rawExchange(mcp, [
          `POST /mcp HTTP/1.1\r\nHost: rebound.example:80\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
        ]);
        assert.match(text, /^HTTP\/1\.1 403/);
        assert.match(text, /"jsonrpc":"2.0"/);
      });

      await t.step("invalid JSON is 400 with -32700 and id null", async () => {
        await assertRpcError(await mcpPost(mcp, '{"jsonrpc":'), 400, /Parse error/, -32700);
      });

      await t.step("a batch is 400 with -32600", async () => {
        await assertRpcError(
          await mcpPost(mcp, [PING, PING]),
          400,
          /batches are not supported/,
          -32600,
        );
      });
    },
  );
});

Deno.test("onboarding MCP: the 16 KiB body cap", async (t) => {
  await withServer({}, async (_server, mcp) => {
    const request = (headers: string) =>
      `POST /mcp HTTP/1.1\r\nHost: ${new URL(mcp).host}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n${headers}\r\n`;

    await t.step("exactly 16384 bytes is read", async () => {
      const prefix = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
      const body = prefix + "x".repeat(16384 - prefix.length - 3) + '"}}';
      assert.equal(body.length, 16384);
      const response = await mcpPost(mcp, body);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    });

    // Deno.serve cannot close a connection from the handler (denoland/deno#9411): the 413
    // goes out at once with Connection: close, a client that honours it stops sending, and
    // whatever still arrives is discarded by the runtime, never buffered by us.
    await t.step("Content-Length over the cap is 413 before any body byte is sent", async () => {
      const text = await rawExchange(mcp, [request("Content-Length: 16385\r\n")]);
      assert.match(text, /^HTTP\/1\.1 413/);
      assert.match(text, /\r\nconnection: close\r\n/i);
      assert.match(text, /exceeds 16384 bytes/);
      assert.match(text, /"code":-32000/);
    });

    await t.step("a chunked body gets 413 once past the cap, before it is finished", async () => {
      const chunk = (size: number) => `${size.toString(16)}\r\n${"x".repeat(size)}\r\n`;
      // 20 KiB in 4 KiB chunks, never terminated: the answer cannot wait for the end.
      const parts = [
        request("Transfer-Encoding: chunked\r\n"),
        ...Array.from({ length: 5 }, () => chunk(4096)),
      ];
      const text = await rawExchange(mcp, parts);
      assert.match(text, /^HTTP\/1\.1 413/);
      assert.match(text, /\r\nconnection: close\r\n/i);
      assert.match(text, /exceeds 16384 bytes/);
    });

    await t.step("the server keeps answering after refusing large bodies", async () => {
      const response = await mcpPost(mcp, { jsonrpc: "2.0", id: 1, method: "ping" });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    });

    await t.step("fetch with a streamed body over the cap gets 413", async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 5; i++) {
            controller.enqueue(new TextEncoder().encode("x".repeat(4096)));
          }
          controller.close();
        },
      });
      const response = await fetch(mcp, {
        method: "POST",
        headers: { ...MCP_HEADERS, "MCP-Protocol-Version": "2025-11-25" },
        body,
      });
      await assertRpcError(response, 413, /exceeds 16384 bytes/);
    });
  });
});

Deno.test("onboarding MCP: rate limit per client address", async () => {
  // A stopped clock: on a loaded machine a real one refills the bucket during the burst.
  const server = await startTestServer({}, { now: manualClock(Date.now()).now });
  const mcp = `${server.authUrl}/mcp`;
  try {
    // DESIGN.md: bursts of 100 per address; the 101st request in a burst is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) {
      const response = await mcpPost(mcp, PING);
      statuses.push(response.status);
      if (i < 100) await response.body?.cancel();
      else {
        assert.match(response.headers.get("Retry-After")!, /^\d+$/);
        assert.ok(Number(response.headers.get("Retry-After")) >= 1);
        await assertRpcError(
          response,
          429,
          /Too many requests: retry after (1 second|\d+ seconds)/,
          -32000,
        );
      }
    }
    assert.deepEqual(statuses.slice(0, 100), Array(100).fill(200));
  } finally {
    await server.close();
  }
});

Deno.test("onboarding MCP: 300 a minute per client address once the burst is spent", async () => {
  const clock = manualClock(Date.now());
  const server = await startTestServer({}, { now: clock.now });
  const mcp = `${server.authUrl}/mcp`;
  const statusOf = async () => {
    const response = await mcpPost(mcp, PING);
    await response.body?.cancel();
    return response.status;
  };
  try {
    for (let i = 0; i < 100; i++) assert.equal(await statusOf(), 200);
    assert.equal(await statusOf(), 429);
    // Ten seconds at 300 a minute buy exactly 50 requests.
    clock.advance(10_000);
    for (let i = 0; i < 50; i++) assert.equal(await statusOf(), 200, `request ${i}`);
    assert.equal(await statusOf(), 429);
  } finally {
    await server.close();
  }
});

Deno.test("onboarding MCP: rate limits switched off answer every request", async () => {
  await withServer({ VESTIBULE_RATE_LIMITS: "off" }, async (_server, mcp) => {
    for (let i = 0; i < 120; i++) {
      const response = await mcpPost(mcp, PING);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
  });
});
