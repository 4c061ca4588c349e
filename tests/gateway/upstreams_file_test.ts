import assert from "node:assert/strict";
import { loadUpstreams, UpstreamsFileError } from "../../src/gateway/upstreams_file.ts";

/** A directory with `upstreams.json` holding `text`, and owner-only files beside it. */
async function withFile(
  text: string,
  files: Record<string, { text: string; mode?: number }>,
  run: (path: string, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    for (const [name, file] of Object.entries(files)) {
      await Deno.writeTextFile(`${dir}/${name}`, file.text);
      await Deno.chmod(`${dir}/${name}`, file.mode ?? 0o600);
    }
    await Deno.writeTextFile(`${dir}/upstreams.json`, text.replaceAll("DIR", dir));
    await run(`${dir}/upstreams.json`, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a file using every field loads with its values, its defaults and its header secrets", async () => {
  const file = {
    upstreams: [
      {
        name: "everything",
        title: "Everything server",
        url: "http://127.0.0.1:3001/mcp",
        headers: { Authorization: { file: "DIR/token" }, "X-Team": { value: "ops" } },
        gated: ["get-sum"],
        hidden: ["printEnv"],
        scopes: { "get-sum": "upstream.everything.write", echo: "app.access" },
        ownerOnly: true,
        businesses: ["b1"],
        timeoutSeconds: 600,
        maxResponseBytes: 1024,
        forwardIdentity: true,
        rateLimit: { perMinute: 10, burst: 5 },
      },
      {
        name: "Files",
        command: "npx",
        args: ["-y", "server-files", "/srv"],
        env: { HOME: "/tmp", API_KEY: { file: "DIR/key" } },
        cwd: "/srv",
      },
    ],
  };
  await withFile(JSON.stringify(file), {
    token: { text: "Bearer s3cret\n" },
    key: { text: "k3y" },
  }, async (path) => {
    const { upstreams } = await loadUpstreams(path);
    assert.deepEqual(upstreams[0], {
      name: "everything",
      title: "Everything server",
      transport: {
        kind: "http",
        url: "http://127.0.0.1:3001/mcp",
        headers: { Authorization: "Bearer s3cret", "X-Team": "ops" },
      },
      gated: new Set(["get-sum"]),
      hidden: new Set(["printEnv"]),
      toolScopes: new Map([["get-sum", "upstream.everything.write"], ["echo", "app.access"]]),
      ownerOnly: true,
      businesses: ["b1"],
      timeoutMs: 600_000,
      maxResponseBytes: 1024,
      forwardIdentity: true,
      rateLimit: { perMinute: 10, burst: 5 },
      auth: null,
    });
    assert.deepEqual(upstreams[1], {
      name: "Files",
      title: "Files",
      transport: {
        kind: "stdio",
        command: "npx",
        args: ["-y", "server-files", "/srv"],
        env: { HOME: "/tmp", API_KEY: "k3y" },
        cwd: "/srv",
      },
      gated: new Set(),
      hidden: new Set(),
      toolScopes: new Map(),
      ownerOnly: false,
      businesses: null,
      timeoutMs: 30_000,
      maxResponseBytes: 4 * 1024 * 1024,
      forwardIdentity: false,
      rateLimit: { perMinute: 120, burst: 60 },
      auth: null,
    });
  });
});

Deno.test('an upstream with "auth": "person" loads with its operator-registered client, secret read from its file', async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/secret`, "client-s3cret\n", { mode: 0o600 });
    await Deno.writeTextFile(
      `${dir}/u.json`,
      JSON.stringify({
        upstreams: [
          { name: "crm", url: "https://crm.example/mcp", auth: "person" },
          {
            name: "files",
            url: "https://files.example/mcp",
            auth: "person",
            oauth: {
              clientId: "vestibule",
              clientSecret: { file: `${dir}/secret` },
              scopes: ["read", "offline_access"],
            },
          },
        ],
      }),
    );
    const { upstreams } = await loadUpstreams(`${dir}/u.json`);
    assert.deepEqual(upstreams[0]!.auth, { client: null, scopes: null });
    assert.deepEqual(upstreams[1]!.auth, {
      client: { id: "vestibule", secret: "client-s3cret" },
      scopes: ["read", "offline_access"],
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("each problem of the file stops start-up with one line naming the file and the field", async (t) => {
  const good = { name: "everything", url: "http://127.0.0.1:3001/mcp" };
  const cases: {
    name: string;
    text: string;
    files?: Record<string, { text: string; mode?: number }>;
    line: string;
  }[] = [
    {
      name: "auth on a child process",
      text: JSON.stringify({ upstreams: [{ name: "a", command: "x", auth: "person" }] }),
      line: "upstreams[0].auth goes only with url: a child process has no one to sign in to",
    },
    {
      name: "an unknown auth",
      text: JSON.stringify({ upstreams: [{ ...good, auth: "team" }] }),
      line: 'upstreams[0].auth "team" must be "person" (each person signs in to it)',
    },
    {
      name: "oauth without auth",
      text: JSON.stringify({ upstreams: [{ ...good, oauth: { clientId: "c" } }] }),
      line: 'upstreams[0].oauth goes only with "auth": "person"',
    },
    {
      name: "an Authorization header with each person's sign-in",
      text: JSON.stringify({
        upstreams: [{ ...good, auth: "person", headers: { authorization: { value: "x" } } }],
      }),
      line:
        'upstreams[0].headers.authorization cannot go with "auth": "person": each person\'s own token is sent',
    },
    {
      name: "a misspelt oauth field",
      text: JSON.stringify({ upstreams: [{ ...good, auth: "person", oauth: { clientID: "c" } }] }),
      line: "upstreams[0].oauth.clientID is not a known field (nearest: clientId)",
    },
    {
      name: "a catalog id of Vestibule's own server",
      text: JSON.stringify({
        upstreams: [{ ...good, catalog: { id: "workspace", title: "T", description: "D" } }],
      }),
      line: `upstreams[0].catalog.id "workspace" is the id of one of Vestibule's own`,
    },
    {
      name: "a catalog id twice",
      text: JSON.stringify({
        upstreams: [
          { ...good, catalog: { id: "crm", title: "T", description: "D" } },
          { name: "b", command: "x", catalog: { id: "crm", title: "T", description: "D" } },
        ],
      }),
      line: 'upstreams[1].catalog.id "crm" repeats upstreams[0].catalog.id',
    },
    {
      name: "a catalog description longer than a card allows",
      text: JSON.stringify({
        upstreams: [{ ...good, catalog: { id: "crm", title: "T", description: "d".repeat(101) } }],
      }),
      line: `upstreams[0].catalog.description "${"d".repeat(101)}" must be at most 100 characters`,
    },
    {
      name: "a catalog without its words",
      text: JSON.stringify({ upstreams: [{ ...good, catalog: { id: "crm" } }] }),
      line: "upstreams[0].catalog.title is missing",
    },
    {
      name: "malformed JSON, at its position",
      text: '{"upstreams": [\n  {"name": "a",}\n]}',
      line: "not valid JSON at line 2, column 16",
    },
    {
      name: "JSON that ends too early",
      text: '{"upstreams": [',
      line: "not valid JSON: it ends too early (line 1, column 16)",
    },
    {
      name: "no upstreams list",
      text: "{}",
      line: "upstreams is missing",
    },
    {
      name: "a missing name",
      text: JSON.stringify({ upstreams: [good, { url: good.url }] }),
      line: "upstreams[1].name is missing",
    },
    {
      name: "a name that is not letters, digits and -",
      text: JSON.stringify({ upstreams: [good, { ...good, name: "a b" }] }),
      line: 'upstreams[1].name "a b" must be letters, digits and -',
    },
    {
      name: "a name too long for its tools' names",
      text: JSON.stringify({ upstreams: [{ ...good, name: "a".repeat(31) }] }),
      line: `upstreams[0].name "${"a".repeat(31)}" must be at most 30 characters`,
    },
    {
      name: "a tool name too long with its prefix",
      text: JSON.stringify({ upstreams: [{ ...good, gated: ["t".repeat(53)] }] }),
      line: `upstreams[0].gated[0] "${"t".repeat(53)}" is too long: everything__${
        "t".repeat(53)
      } has 65 characters, more than 64`,
    },
    {
      name: "a name repeated in another case",
      text: JSON.stringify({ upstreams: [good, { ...good, name: "Everything" }] }),
      line: 'upstreams[1].name "Everything" repeats upstreams[0].name (names are compared ' +
        "ignoring case)",
    },
    {
      name: "both url and command",
      text: JSON.stringify({ upstreams: [{ ...good, command: "npx" }] }),
      line: "upstreams[0] has both url and command: give exactly one",
    },
    {
      name: "neither url nor command",
      text: JSON.stringify({ upstreams: [{ name: "x" }] }),
      line: "upstreams[0] needs url (an HTTP server) or command (a child process)",
    },
    {
      name: "headers for a child process",
      text: JSON.stringify({
        upstreams: [{ name: "x", command: "npx", headers: { A: { value: "b" } } }],
      }),
      line: "upstreams[0].headers goes only with url",
    },
    {
      name: "a URL that is not http",
      text: JSON.stringify({ upstreams: [{ ...good, url: "ftp://example.com" }] }),
      line: 'upstreams[0].url "ftp://example.com" must be an http or https URL',
    },
    {
      name: "a header file group and others may read",
      text: JSON.stringify({
        upstreams: [{ ...good, headers: { Authorization: { file: "DIR/token" } } }],
      }),
      files: { token: { text: "Bearer x", mode: 0o644 } },
      line: "upstreams[0].headers.Authorization.file: DIR/token is open to group or others " +
        "(mode 0644); make it owner-only: chmod 600 DIR/token",
    },
    {
      name: "a missing header file",
      text: JSON.stringify({
        upstreams: [{ ...good, headers: { "X-Key": { file: "DIR/nothing" } } }],
      }),
      line: 'upstreams[0].headers["X-Key"].file "DIR/nothing" does not exist',
    },
    {
      name: "an empty header file",
      text: JSON.stringify({
        upstreams: [{ ...good, headers: { "X-Key": { file: "DIR/token" } } }],
      }),
      files: { token: { text: "\n" } },
      line: 'upstreams[0].headers["X-Key"].file "DIR/token" is empty',
    },
    {
      name: "a header with both file and value",
      text: JSON.stringify({
        upstreams: [{ ...good, headers: { A: { file: "x", value: "y" } } }],
      }),
      line: 'upstreams[0].headers.A must be {"file": PATH} or {"value": TEXT}',
    },
    {
      name: "an unknown field, with the nearest known one",
      text: JSON.stringify({ upstreams: [{ ...good, tilte: "Everything" }] }),
      line: "upstreams[0].tilte is not a known field (nearest: title)",
    },
    {
      name: "an unknown field inside an environment file",
      text: JSON.stringify({
        upstreams: [{ name: "x", command: "npx", env: { KEY: { fil: "k" } } }],
      }),
      line: "upstreams[0].env.KEY.fil is not a known field (nearest: file)",
    },
    {
      name: "a scope the upstream may not use",
      text: JSON.stringify({
        upstreams: [{ ...good, scopes: { "get-sum": "upstream.other.write" } }],
      }),
      line: 'upstreams[0].scopes["get-sum"] "upstream.other.write" is not a scope it may use: ' +
        "a spec scope (app.access, …), upstream.everything or upstream.everything.WORD " +
        "(WORD: a-z, 0-9 and -)",
    },
    {
      name: "a tool both gated and hidden",
      text: JSON.stringify({ upstreams: [{ ...good, gated: ["a", "b"], hidden: ["b"] }] }),
      line: 'upstreams[0].hidden[0] "b" is also gated: a hidden tool is never called, so it ' +
        "cannot be gated",
    },
    {
      name: "a tool name outside MCP's characters",
      text: JSON.stringify({ upstreams: [{ ...good, hidden: ["a b"] }] }),
      line: 'upstreams[0].hidden[0] "a b" must be 1 to 128 letters, digits and _ . -',
    },
    {
      name: "a timeout out of range",
      text: JSON.stringify({ upstreams: [{ ...good, timeoutSeconds: 601 }] }),
      line: "upstreams[0].timeoutSeconds must be at most 600, not 601",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      await withFile(c.text, c.files ?? {}, async (path, dir) => {
        const error = await loadUpstreams(path).then(
          () => assert.fail("loaded"),
          (error) => error,
        );
        assert.ok(error instanceof UpstreamsFileError, String(error));
        assert.equal(
          error.line,
          `VESTIBULE_UPSTREAMS (${path}): ${c.line.replaceAll("DIR", dir)}`,
        );
      });
    });
  }
});

Deno.test("an upstream listed in the AI Catalog keeps the operator's words; others have no listing", async () => {
  const file = {
    upstreams: [
      {
        name: "crm-internal",
        url: "http://127.0.0.1:3001/mcp",
        catalog: { id: "customer-records", title: "Customer records", description: "Orders." },
      },
      { name: "billing", url: "http://127.0.0.1:3002/mcp" },
    ],
  };
  await withFile(JSON.stringify(file), {}, async (path) => {
    const { upstreams } = await loadUpstreams(path);
    assert.deepEqual(upstreams[0]!.catalog, {
      id: "customer-records",
      title: "Customer records",
      description: "Orders.",
    });
    assert.equal("catalog" in upstreams[1]!, false);
  });
});

Deno.test("a header secret is never in the line that refuses its file", async () => {
  const text = JSON.stringify({
    upstreams: [{
      name: "x",
      url: "http://127.0.0.1:1/mcp",
      headers: { A: { file: "DIR/token" } },
    }],
  });
  await withFile(text, { token: { text: "one\ntwo-secret" } }, async (path) => {
    const error = await loadUpstreams(path).catch((error) => error);
    assert.ok(error instanceof UpstreamsFileError);
    assert.ok(error.line.endsWith("must hold one line (a header's value)"), error.line);
    assert.ok(!error.line.includes("secret"), error.line);
  });
});
