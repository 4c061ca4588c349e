// The doctor's discovery checks (`admin check --live`): the AI Catalog and both Server Cards
// fetched through the public URLs, compared with the live endpoints. A cache in front serving
// an old card, or a proxy stripping headers, is a fault naming the field.
import assert from "node:assert/strict";
import { liveChecks } from "../../../src/operator/cli/doctor.ts";
import { formatFinding } from "../../../src/operator/cli/findings.ts";
import { startTestServer } from "../../blackbox/support/harness.ts";

/** A fetch whose answers for URLs ending in `suffix` are changed by `edit` (a cache in front). */
function changing(
  suffix: string,
  edit: (response: Response) => Promise<Response>,
): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    return String(input).endsWith(suffix) ? await edit(response) : response;
  };
}

Deno.test("doctor: the catalog and both cards agree with the live endpoints", async () => {
  const server = await startTestServer();
  try {
    const findings = await liveChecks(server.config, fetch);
    const lines = findings.map(formatFinding);
    assert.deepEqual(findings.filter((f) => f.level !== "ok"), [], lines.join("\n"));
    assert.ok(lines.includes(
      `ok    2 entries, all ours (${server.baseUrl}/.well-known/ai-catalog.json)`,
    ));
    assert.ok(lines.includes(
      `ok    agrees with the live endpoint: 127.0.0.1/onboarding 1.0.0 (${server.authUrl}/mcp/server-card)`,
    ));
    assert.ok(lines.includes(
      `ok    agrees with this release: 127.0.0.1/workspace 1.0.0 (${server.apiUrl}/api/mcp/server-card)`,
    ));
  } finally {
    await server.close();
  }
});

Deno.test("doctor: an old card served in front of the endpoint is a fault naming each field", async () => {
  const server = await startTestServer();
  try {
    const stale = changing("/mcp/server-card", async (response) => {
      const card = await response.json();
      card.version = "0.9.0";
      card.remotes[0].supportedProtocolVersions = ["2025-06-18"];
      return new Response(JSON.stringify(card), { headers: response.headers });
    });
    const lines = (await liveChecks(server.config, stale)).map(formatFinding);
    const at = `(${server.authUrl}/mcp/server-card)`;
    assert.ok(
      lines.includes(`fault version is "0.9.0" but server/discover reports "1.0.0" ${at}`),
      lines.join("\n"),
    );
    assert.ok(
      lines.includes(
        `fault supportedProtocolVersions is ["2025-06-18"] but the endpoint negotiates ` +
          `["2026-07-28","2025-11-25","2025-06-18"] ${at}`,
      ),
      lines.join("\n"),
    );
  } finally {
    await server.close();
  }
});

Deno.test("doctor: a proxy that strips ETag and CORS from a card is a fault", async () => {
  const server = await startTestServer();
  try {
    const stripping = changing("/api/mcp/server-card", (response) => {
      const headers = new Headers(response.headers);
      headers.delete("ETag");
      headers.delete("Access-Control-Allow-Origin");
      return Promise.resolve(new Response(response.body, { status: response.status, headers }));
    });
    const lines = (await liveChecks(server.config, stripping)).map(formatFinding);
    const at = `(${server.apiUrl}/api/mcp/server-card)`;
    const hint = "is a proxy in front stripping or rewriting headers?";
    assert.ok(lines.includes(`fault no ETag: ${hint} ${at}`), lines.join("\n"));
    assert.ok(lines.includes(`fault Access-Control-Allow-Origin is not *: ${hint} ${at}`));
  } finally {
    await server.close();
  }
});

Deno.test("doctor: a catalog entry pointing elsewhere, or a card missing from it, is a fault", async () => {
  const server = await startTestServer();
  try {
    const moved = changing("/.well-known/ai-catalog.json", async (response) => {
      const catalog = await response.json();
      catalog.entries[1].url = "https://old.example/api/mcp/server-card";
      return new Response(JSON.stringify(catalog), { headers: response.headers });
    });
    const lines = (await liveChecks(server.config, moved)).map(formatFinding);
    const at = `(${server.baseUrl}/.well-known/ai-catalog.json)`;
    assert.ok(
      lines.includes(
        `fault entry "urn:air:127.0.0.1:mcp:workspace" points at ` +
          `"https://old.example/api/mcp/server-card", not at one of this server's cards ${at}`,
      ),
      lines.join("\n"),
    );
    assert.ok(
      lines.includes(`fault no entry points at ${server.apiUrl}/api/mcp/server-card ${at}`),
    );
  } finally {
    await server.close();
  }
});
