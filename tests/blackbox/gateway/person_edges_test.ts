// Per-person upstream sign-in at its edges: an authorization server that lies about its issuer,
// a challenge that points discovery at a private address, an upstream that asks for sign-in
// only by answering 401, and start-up without a usable key file.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { tempOutbox } from "../support/accounts_browser.ts";
import { type GatewayServer, startGatewayServer, until } from "../support/gateway_support.ts";
import { mainCommand, originsEnv, startTaskFlags, startup } from "../support/main_process.ts";
import {
  connect,
  connectPageUrl,
  personBrowser,
  startPersonUpstream,
  writeKeyFile,
} from "../support/person_upstream_support.ts";
import { signIn } from "../support/workspace_support.ts";
import { freePort } from "../../../testkit/ports.ts";

const text = (message: Record<string, any>) => message.result.content[0].text as string;

interface FakeServer {
  readonly origin: string;
  /** Paths requested, in order. */
  readonly requested: string[];
  close(): Promise<void>;
}

/** A loopback server answering each request with what `answer` builds; it records the paths. */
function fakeServer(answer: (path: string, origin: string) => Response): FakeServer {
  const requested: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request): Response => {
      const url = new URL(request.url);
      requested.push(url.pathname);
      return answer(url.pathname, url.origin);
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requested,
    close: () => server.shutdown(),
  };
}

/** An MCP endpoint at /mcp that answers every request 401 with `challenge`. */
function challengingUpstream(
  challenge: (origin: string) => string,
  documents: Record<string, (origin: string) => unknown> = {},
): FakeServer {
  return fakeServer((path, origin) => {
    const document = documents[path];
    if (document) return Response.json(document(origin));
    if (path === "/mcp") {
      return new Response(null, {
        status: 401,
        headers: { "WWW-Authenticate": challenge(origin) },
      });
    }
    return new Response(null, { status: 404 });
  });
}

/** A gateway with `url` as the per-person upstream `crm`, and its owner signed in. */
async function gatewayFor(url: string) {
  const keyFile = await writeKeyFile();
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "crm", title: "Acme CRM", url, auth: "person" }],
    { VESTIBULE_UPSTREAM_KEY_FILE: keyFile, VESTIBULE_MAIL: outbox.env },
  );
  const browser = await signIn(ws, outbox, "owner@example.com");
  return {
    ws,
    browser,
    async close() {
      await ws.close();
      await Deno.remove(keyFile);
    },
  };
}

/** The start-up line about `crm`'s sign-in, once logged. */
function signInLine(ws: GatewayServer) {
  return until(
    "the start-up line about crm's sign-in",
    () =>
      ws.server.logs.map((line) => JSON.parse(line)).find((entry) =>
        entry.upstream === "crm" && (entry.issuer !== undefined || /sign-in/.test(entry.message))
      ),
  );
}

/** Follows the connect link of `crm` signed in (nothing connected: it starts connecting). */
async function pressConnect(ws: GatewayServer, browser: Awaited<ReturnType<typeof signIn>>) {
  return await browser.get(connectPageUrl(ws));
}

/** Nothing of a connection was kept: no registration, no sign-in under way, no connection. */
async function assertNothingStored(ws: GatewayServer) {
  for (
    const prefix of [
      ["upstream_registration"],
      ["upstream_authorization"],
      ["ws", ws.businessId, "upstream_connection"],
    ]
  ) {
    for await (const entry of ws.server.store.list(prefix)) {
      assert.fail(`stored ${JSON.stringify(entry.key)}`);
    }
  }
}

/** The problems logged for connections that could not start, oldest first. */
function startProblems(ws: GatewayServer): string[] {
  return ws.server.logs.map((line) => JSON.parse(line)).filter((event) =>
    event.message === "a person's connection to the upstream could not start"
  ).map((event) => event.problem);
}

/** A refused connection's page: in a person's words, who can mend it, and the way back. */
function assertPersonWords(page: string): void {
  const notice = /id="notice"><p>([\s\S]*?)<\/p>/.exec(page)?.[1]?.replace(/\s+/g, " ");
  assert.match(notice ?? "", /^We could not open Acme CRM&#39;s sign-in, so nothing changed/);
  assert.match(notice!, /tell the operator of this Vestibule/);
  assert.doesNotMatch(page, /metadata|issuer|protected-resource/i);
  assert.match(page, /<a href="\/account">Back to your account<\/a>/);
}

Deno.test("connecting is refused when the authorization server's metadata names another issuer, and the person is never sent there", async () => {
  // The upstream names issuer A; the document at A's well-known URL says it is issuer B.
  const server = fakeServer((path, origin) => {
    if (path === "/.well-known/oauth-authorization-server/a") {
      return Response.json({
        issuer: `${origin}/b`,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        code_challenge_methods_supported: ["S256"],
      });
    }
    return new Response(null, { status: 404 });
  });
  const upstream = challengingUpstream(
    (origin) => `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
    {
      "/.well-known/oauth-protected-resource/mcp": (origin) => ({
        resource: `${origin}/mcp`,
        authorization_servers: [`${server.origin}/a`],
      }),
    },
  );
  const gateway = await gatewayFor(`${upstream.origin}/mcp`);
  try {
    assert.match((await signInLine(gateway.ws)).problem, /names the issuer .*\/b, not /);
    const refused = await pressConnect(gateway.ws, gateway.browser);
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.response.headers.get("Location"), null);
    // The person reads what happened and who can mend it; the operator reads why in the log.
    assertPersonWords(refused.text);
    assert.equal(
      startProblems(gateway.ws).at(-1),
      `The authorization server metadata at ${
        new URL(server.origin).host
      } names the issuer ${server.origin}/b, not ${server.origin}/a, so it is not used`,
    );
    // Only its metadata was read (at start-up, then for the link): no registration, never its
    // authorization endpoint.
    assert.deepEqual(server.requested, [
      "/.well-known/oauth-authorization-server/a",
      "/.well-known/oauth-authorization-server/a",
    ]);
    await assertNothingStored(gateway.ws);
  } finally {
    await gateway.close();
    await upstream.close();
    await server.close();
  }
});

Deno.test("a challenge whose resource_metadata points at a private or metadata-service address is refused before anything is fetched", async (t) => {
  const cases = [
    {
      url: "https://10.0.0.1/.well-known/oauth-protected-resource",
      why:
        "Refused the protected-resource metadata on 10.0.0.1: the host resolves to a private address",
    },
    {
      url: "https://169.254.169.254/latest/meta-data/",
      why:
        "Refused the protected-resource metadata on 169.254.169.254: the host resolves to a private address",
    },
    {
      url: "http://169.254.169.254/latest/meta-data/",
      why: "Refused the protected-resource metadata on 169.254.169.254: it must use https",
    },
  ];
  for (const c of cases) {
    await t.step(c.url, async () => {
      const upstream = challengingUpstream(() => `Bearer resource_metadata="${c.url}"`);
      const gateway = await gatewayFor(`${upstream.origin}/mcp`);
      try {
        const refused = await pressConnect(gateway.ws, gateway.browser);
        assert.equal(refused.status, 502, refused.text);
        assert.equal(refused.response.headers.get("Location"), null);
        // The boundary's words, which only a refusal before fetching gives: a fetch of it
        // would have ended in a network error or the 5 s budget, worded "The … at … ".
        assertPersonWords(refused.text);
        assert.equal(startProblems(gateway.ws).at(-1), c.why);
        // Only the challenge was asked of the upstream (the listing and the connect button).
        assert.ok(upstream.requested.every((path) => path === "/mcp"), upstream.requested.join());
        await assertNothingStored(gateway.ws);
      } finally {
        await gateway.close();
        await upstream.close();
      }
    });
  }
});

Deno.test("an upstream entry without auth whose server answers 401 with a resource_metadata challenge is connected per person", async () => {
  const setup = await startPersonUpstream({ entry: { auth: undefined } });
  const { ws } = setup;
  try {
    const { token } = await ws.token(["app.access", "upstream.crm"]);
    const owner = await personBrowser(setup);
    // Its first listing met the 401: from then on its connect link leads to its sign-in.
    await until("the upstream to be known as per-person", async () => {
      const page = await owner.get(connectPageUrl(ws));
      return page.status === 303;
    });
    // Its tools are unknown until someone connected.
    assert.deepEqual((await ws.toolNames(token)).filter((n) => n.startsWith("crm__")), []);

    const done = await connect(setup, owner, "alice");
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Connected/);
    // Once connected, going back is the primary action; connecting anew a secondary one.
    const actions = /<div class="actions">([\s\S]*?)<\/div>/.exec(done.text)![1]!;
    assert.match(
      actions,
      /^\s*<a class="button primary" href="\/account">Back to your account<\/a>/,
    );
    assert.match(
      actions,
      /class="button secondary"[^>]*>Reconnect your Acme CRM account<\/button>/,
    );
    assert.doesNotMatch(done.text, /Connect again/);
    const called = await until("a call that reaches the upstream", async () => {
      const called = await ws.call(token, "crm__whoami");
      return called.message.result?.isError === undefined && called;
    });
    assert.equal(text(called.message), "alice");
  } finally {
    await setup.close();
  }
});

Deno.test("start-up refuses, in one line, a per-person upstream without a key file or with a key file others may read", async (t) => {
  const flags = await startTaskFlags();
  const dir = await Deno.makeTempDir();
  const upstreams = `${dir}/upstreams.json`;
  await Deno.writeTextFile(
    upstreams,
    JSON.stringify({
      upstreams: [{ name: "crm", url: "http://127.0.0.1:9/mcp", auth: "person" }],
    }),
  );
  const key = `${dir}/upstream.key`;
  await Deno.writeTextFile(key, "", { mode: 0o644 });
  await Deno.chmod(key, 0o644);
  const env = { ...originsEnv(), VESTIBULE_DATA: ":memory:", VESTIBULE_UPSTREAMS: upstreams };
  const start = (extra: Record<string, string>) =>
    startup(mainCommand([...flags, `--allow-read=${dir}`], { ...env, ...extra }));
  try {
    await t.step("without VESTIBULE_UPSTREAM_KEY_FILE", async () => {
      const outcome = await start({});
      assert.ok(!outcome.listened, outcome.stdout);
      assert.equal(outcome.code, 2);
      assert.equal(
        outcome.stderr,
        'vestibule: VESTIBULE_UPSTREAM_KEY_FILE is required: upstream "crm" has "auth": ' +
          '"person", and each person\'s tokens are kept encrypted with its key (make one with ' +
          "deno task admin upstream-key)\n",
      );
    });
    await t.step("with a key file others may read", async () => {
      const outcome = await start({ VESTIBULE_UPSTREAM_KEY_FILE: key });
      assert.ok(!outcome.listened, outcome.stdout);
      assert.equal(outcome.code, 2);
      assert.equal(
        outcome.stderr,
        `vestibule: VESTIBULE_UPSTREAM_KEY_FILE="${key}": ${key} is open to group or others ` +
          `(mode 0644); make it owner-only: chmod 600 ${key}\n`,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("start-up logs, for each per-person upstream, where its people sign in or why no one can", async (t) => {
  await t.step("one that is unreachable", async () => {
    const port = freePort();
    const gateway = await gatewayFor(`http://127.0.0.1:${port}/mcp`);
    try {
      const line = await signInLine(gateway.ws);
      assert.equal(line.level, "warn");
      assert.equal(
        line.message,
        "upstream's sign-in cannot be found: no one can connect to it until it can",
      );
      assert.match(
        line.problem,
        new RegExp(`^The protected-resource metadata at 127\\.0\\.0\\.1:${port} `),
      );
    } finally {
      await gateway.close();
    }
  });

  await t.step("one that offers no OAuth", async () => {
    const upstream = fakeServer(() => new Response(null, { status: 404 }));
    const gateway = await gatewayFor(`${upstream.origin}/mcp`);
    try {
      const line = await signInLine(gateway.ws);
      assert.equal(line.level, "warn");
      assert.equal(
        line.problem,
        `No protected-resource metadata for ${upstream.origin}/mcp at ` +
          `${upstream.origin}/.well-known/oauth-protected-resource/mcp or ` +
          `${upstream.origin}/.well-known/oauth-protected-resource`,
      );
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });

  await t.step("one whose sign-in is found", async () => {
    const setup = await startPersonUpstream();
    try {
      const line = await signInLine(setup.ws);
      assert.deepEqual([line.level, line.issuer], ["info", setup.upstream.issuer]);
    } finally {
      await setup.close();
    }
  });
});
