import assert from "node:assert/strict";
import { config } from "../oauth/fixtures.ts";
import { loadConnectionGuide } from "../../src/onboarding/connection_guide.ts";
import { checkDiscovery } from "../../src/onboarding/discovery_check.ts";

Deno.test("discovery check", async (t) => {
  const guide = await loadConnectionGuide(config);
  const good: Record<string, () => Response> = {
    [guide.workspaceMcpUrl]: () =>
      new Response(null, {
        status: 401,
        headers: {
          "WWW-Authenticate":
            `Bearer resource_metadata="${guide.protectedResourceMetadataUrl}", scope="app.access"`,
        },
      }),
    [guide.protectedResourceMetadataUrl]: () =>
      Response.json({
        resource: "https://api.example.com",
        authorization_servers: [guide.issuer],
        scopes_supported: ["app.access"],
      }),
    [guide.authorizationServerMetadataUrl]: () =>
      Response.json({
        issuer: guide.issuer,
        authorization_endpoint: `${guide.issuer}/oauth2/authorize`,
        token_endpoint: `${guide.issuer}/oauth2/token`,
      }),
  };
  const fetcher = (answers: Record<string, () => Response>) =>
    ((input: string | URL | Request) => {
      const answer = answers[String(input)];
      return answer ? Promise.resolve(answer()) : Promise.reject(new TypeError("refused"));
    }) as typeof fetch;

  await t.step("every document agreeing is ok, with progress per step", async () => {
    const progress: [number, string][] = [];
    const result = await checkDiscovery(guide, fetcher(good), (done, message) => {
      progress.push([done, message]);
      return Promise.resolve();
    });
    assert.deepEqual(result.checks.map((c) => c.detail), ["ok", "ok", "ok"]);
    assert.equal(result.ok, true);
    assert.deepEqual(progress.map(([done]) => done), [0, 1, 2, 3]);
  });

  await t.step("a disagreeing or missing document is reported, not thrown", async () => {
    const answers = {
      ...good,
      [guide.authorizationServerMetadataUrl]: () =>
        Response.json({
          issuer: "https://evil.example",
          authorization_endpoint: "x",
          token_endpoint: "y",
        }),
    };
    delete answers[guide.protectedResourceMetadataUrl];
    const result = await checkDiscovery(guide, fetcher(answers), () => Promise.resolve());
    assert.equal(result.ok, false);
    assert.deepEqual(result.checks.map((c) => c.detail), [
      "ok",
      "unreachable from this server",
      `issuer is not ${guide.issuer}`,
    ]);
  });

  await t.step("a workspace that does not challenge is reported", async () => {
    const answers = { ...good, [guide.workspaceMcpUrl]: () => new Response("{}", { status: 200 }) };
    const result = await checkDiscovery(guide, fetcher(answers), () => Promise.resolve());
    assert.equal(result.checks[0]!.detail, "expected 401, got 200");
  });
});
