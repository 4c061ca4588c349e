// Client metadata documents served by a hostile server on loopback: bodies that reset, break
// their framing, trickle or overflow are invalid_client at authorize, token and revoke, never a
// 500, and a document that trickles forever ends within the fetch's time budget.
import assert from "node:assert/strict";
import { UNLIMITED } from "../../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../../src/oauth/cimd.ts";
import { manualClock } from "../../store/store_contract.ts";
import {
  authorizeParams,
  authorizeUrl,
  type OAuthFixture,
  oauthFixture,
} from "../support/oauth_helpers.ts";
import { SPEC_SCOPES } from "../../../src/oauth/scopes.ts";

const JSON_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
const CHUNKED_HEAD = `${JSON_HEAD}Transfer-Encoding: chunked\r\n\r\n`;
const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;

type Conduct = (write: (text: string) => Promise<void>) => Promise<void>;

/** What each path does to the fetcher; the connection is closed when it returns. */
const CONDUCT: Record<string, Conduct> = {
  // Promises 1000 bytes, sends 13, and hangs up.
  "/reset": (write) => write(`${JSON_HEAD}Content-Length: 1000\r\n\r\n{"client_id":`),
  "/reset-404": (write) => write("HTTP/1.1 404 Not Found\r\nContent-Length: 1000\r\n\r\nnot h"),
  "/trickle-reset": async (write) => {
    await write(CHUNKED_HEAD);
    for (const piece of ['{"client_id"', ':"http', "://"]) await write(chunk(piece));
  },
  "/bad-framing": (write) => write(`${CHUNKED_HEAD}zz\r\n{}\r\n0\r\n\r\n`),
  "/bad-gzip": (write) =>
    write(`${JSON_HEAD}Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!`),
  "/not-json": (write) => write(`${JSON_HEAD}Content-Length: 5\r\n\r\nhello`),
  // 6 KiB in 1 KiB chunks, no Content-Length: only counting finds it too large.
  "/big": async (write) => {
    await write(CHUNKED_HEAD);
    for (let i = 0; i < 6; i++) await write(chunk(" ".repeat(1024)));
    await write("0\r\n\r\n");
  },
  // A byte at a time, for as long as anyone listens.
  "/slow": async (write) => {
    await write(`${CHUNKED_HEAD}${chunk("{")}`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await write(chunk(" "));
    }
  },
};

/** Raw HTTP/1.1 over TCP, so the server can lie about lengths, break framing and hang up. */
function hostileServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const origin = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const open = new Set<Deno.Conn>();
  const handlers: Promise<void>[] = [];
  const serve = async (conn: Deno.Conn) => {
    open.add(conn);
    try {
      let head = "";
      const buffer = new Uint8Array(4096);
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buffer);
        if (n === null) return;
        head += new TextDecoder().decode(buffer.subarray(0, n));
      }
      const path = head.split(" ")[1]!;
      const write = async (text: string) => {
        await conn.write(new TextEncoder().encode(text));
      };
      await (CONDUCT[path] ?? ((w) => w("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")))(
        write,
      );
    } catch {
      // The fetcher gave up (timeout) or the test is over: either way, hang up.
    } finally {
      open.delete(conn);
      try {
        conn.close();
      } catch { /* already closed */ }
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) handlers.push(serve(conn));
  })().catch(() => {});
  return {
    url: (path: string) => `${origin}${path}`,
    async close() {
      listener.close();
      for (const conn of open) conn.close();
      await accepting;
      await Promise.all(handlers);
    },
  };
}

/** The three places a client_id is looked up: authorize (HTML page), token and revoke (JSON). */
async function lookups(fx: OAuthFixture, clientId: string) {
  const { params } = await authorizeParams({ clientId, redirectUri: "https://doc.example/cb" });
  const page = await fetch(authorizeUrl(fx, params), { redirect: "manual" });
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: clientId, ...fields }).toString(),
  });
  const tokenResponse = await fetch(
    `${fx.auth}/api/auth/oauth2/token`,
    form({ grant_type: "authorization_code", code: "x", code_verifier: "y".repeat(43) }),
  );
  const revokeResponse = await fetch(`${fx.auth}/api/auth/oauth2/revoke`, form({ token: "t" }));
  return {
    authorize: { status: page.status, text: await page.text() },
    token: { status: tokenResponse.status, text: await tokenResponse.text() },
    revoke: { status: revokeResponse.status, text: await revokeResponse.text() },
  };
}

Deno.test("hostile client metadata documents are invalid_client at authorize, token and revoke", async (t) => {
  const documents = hostileServer();
  const fx = await oauthFixture({ VESTIBULE_CIMD_ALLOW_LOOPBACK: "on" });
  try {
    const cases: [path: string, description: string][] = [
      ["/reset", "The client metadata document could not be fetched"],
      ["/trickle-reset", "The client metadata document could not be fetched"],
      ["/bad-framing", "The client metadata document could not be fetched"],
      ["/bad-gzip", "The client metadata document could not be fetched"],
      ["/reset-404", "The client metadata document answered 404"],
      ["/big", "The client metadata document exceeds 5120 bytes"],
      ["/not-json", "The client metadata document is not JSON"],
    ];
    for (const [path, description] of cases) {
      await t.step(`${path}: ${description}`, async () => {
        const logged = fx.server.logs.length;
        const { authorize, token, revoke } = await lookups(fx, documents.url(path));
        assert.equal(authorize.status, 400, authorize.text);
        assert.ok(authorize.text.includes(description), authorize.text);
        for (const answer of [token, revoke]) {
          assert.equal(answer.status, 401, answer.text);
          assert.deepEqual(JSON.parse(answer.text), {
            error: "invalid_client",
            error_description: description,
          });
        }
        const errors = fx.server.logs.slice(logged).filter((line) =>
          JSON.parse(line).level !== "info"
        );
        assert.deepEqual(errors, []);
      });
    }
  } finally {
    await fx.close();
    await documents.close();
  }
});

Deno.test("a client metadata document that trickles forever ends with the fetch's time budget", async () => {
  const documents = hostileServer();
  try {
    const resolver = createMetadataDocuments({
      config: { cimdAllowLoopback: true },
      now: manualClock().now,
      budget: UNLIMITED,
      scopes: SPEC_SCOPES,
      // The real fetch over a real socket, with the 5 s budget cut to 300 ms to keep this fast:
      // the body must be read under the signal given to fetch, whichever fires first.
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          signal: AbortSignal.any([init!.signal!, AbortSignal.timeout(300)]),
        }),
    });
    assert.deepEqual(await resolver.resolve(documents.url("/slow")), {
      ok: false,
      description: "The client metadata document could not be fetched",
    });
  } finally {
    await documents.close();
  }
});
