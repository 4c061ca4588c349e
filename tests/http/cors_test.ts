// The CORS policies as tables: what each origin reads, and each preflight's answer.
import assert from "node:assert/strict";
import { createCorsPolicies, withCors } from "../../src/http/cors.ts";
import { createRouter } from "../../src/http/router.ts";

const TRUSTED = "https://app.example.com";
const cors = createCorsPolicies(["http://127.0.0.1:9100", TRUSTED]);
const context = { clientAddress: "192.0.2.1" };
const EXPOSED = "WWW-Authenticate, Retry-After, Mcp-Session-Id, MCP-Protocol-Version";

function route(policy: keyof typeof cors, methods: "GET" | "POST") {
  const router = createRouter({
    "/r": withCors(cors[policy], { [methods]: () => Promise.resolve(new Response("ok")) }),
  });
  return (method: string, origin: string | null) =>
    router(
      new Request("http://x.test/r", {
        method,
        headers: origin === null
          ? {}
          : { Origin: origin, "Access-Control-Request-Method": methods },
      }),
      context,
    );
}

const cases = [
  {
    name: "open: any origin reads, without credentials",
    policy: "open" as const,
    method: "GET" as const,
    origin: "https://anyone.example",
    answer: { "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED },
    preflight: {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET, HEAD",
      "access-control-allow-headers": "*, Authorization",
      "access-control-max-age": "600",
    },
  },
  {
    name: "client: a trusted origin reads",
    policy: "client" as const,
    method: "POST" as const,
    origin: TRUSTED,
    answer: {
      "access-control-allow-origin": TRUSTED,
      "access-control-expose-headers": EXPOSED,
      "vary": "Origin",
    },
    preflight: {
      "allow": "POST, OPTIONS",
      "access-control-allow-origin": TRUSTED,
      "access-control-expose-headers": EXPOSED,
      "vary": "Origin",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "Content-Type, Authorization",
      "access-control-max-age": "600",
    },
  },
  {
    name: "client: another origin reads nothing",
    policy: "client" as const,
    method: "POST" as const,
    origin: "https://evil.example",
    answer: {},
    preflight: { "allow": "POST, OPTIONS" },
  },
  {
    name: "mcp: a trusted origin may send the MCP headers",
    policy: "mcp" as const,
    method: "POST" as const,
    origin: TRUSTED,
    answer: {
      "access-control-allow-origin": TRUSTED,
      "access-control-expose-headers": EXPOSED,
      "vary": "Origin",
    },
    preflight: {
      "allow": "POST, OPTIONS",
      "access-control-allow-origin": TRUSTED,
      "access-control-expose-headers": EXPOSED,
      "vary": "Origin",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers":
        "Content-Type, Accept, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID",
      "access-control-max-age": "600",
    },
  },
  {
    name: "client: no Origin (not a browser) gets no CORS headers",
    policy: "client" as const,
    method: "POST" as const,
    origin: null,
    answer: {},
    preflight: { "allow": "POST, OPTIONS" },
  },
];

Deno.test("CORS policies", async (t) => {
  for (const c of cases) {
    await t.step(c.name, async () => {
      const send = route(c.policy, c.method);
      const answer = await send(c.method, c.origin);
      assert.equal(await answer.text(), "ok");
      const cors = (response: Response) =>
        Object.fromEntries(
          [...response.headers].filter(([name]) =>
            name.startsWith("access-control-") || name === "vary" || name === "allow"
          ),
        );
      assert.deepEqual(cors(answer), c.answer);
      const preflight = await send("OPTIONS", c.origin);
      assert.equal(preflight.status, 204);
      assert.deepEqual(cors(preflight), c.preflight);
    });
  }
});
