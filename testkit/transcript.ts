// A behaviour transcript for structural changes: starts main.ts of a checkout (with --demo, the
// operator listener and a file outbox) and records about 1,100 requests over the three origins
// and the operator listener (every path and method, both MCP endpoints with good and bad messages
// and every tool, the OAuth journey as the demo owner), each as status, headers and body, with
// what changes from run to run masked. Two checkouts' transcripts are compared with diff:
//   deno run -A testkit/transcript.ts ../before before.jsonl
//   deno run -A testkit/transcript.ts . after.jsonl && diff before.jsonl after.jsonl
import { recordOnboarding, recordWorkspace } from "./transcript_mcp.ts";
import { recordOAuthJourney, recordRevocation } from "./transcript_oauth.ts";
import { createRecorder } from "./transcript_recorder.ts";
import { startTranscriptServer } from "./transcript_server.ts";

const [tree, out] = Deno.args;
if (!tree || !out) throw new Error("usage: transcript.ts CHECKOUT OUT.jsonl");

const server = await startTranscriptServer(tree);
const { base, auth, api, admin } = server;
const rec = createRecorder();
const { send } = rec;

// 1. Every origin × path × method.
const PATHS = [
  "/",
  "/health",
  "/llms.txt",
  "/index.json",
  "/index.md",
  "/index.html",
  "/developers",
  "/developers.json",
  "/developers.md",
  "/openapi.json",
  "/privacy",
  "/terms",
  "/contact",
  "/assets/style.css",
  "/agents",
  "/mcp",
  "/api/mcp",
  "/api/mcp/",
  "/nope",
  "/index.json/",
  "/.well-known/oauth-authorization-server/api/auth",
  "/.well-known/oauth-protected-resource",
  "/.well-known/openid-configuration/api/auth",
  "/api/auth/.well-known/oauth-authorization-server",
  "/api/auth/.well-known/openid-configuration",
  "/.well-known/oauth-authorization-server",
  "/api/auth/jwks",
  "/api/auth/oauth2/authorize",
  "/api/auth/oauth2/token",
  "/api/auth/oauth2/register",
  "/api/auth/oauth2/revoke",
  "/api/auth/oauth2/consent",
  "/account",
  "/approvals/x",
  "/sign-in",
  "/sign-in/verify",
  "/sign-out",
  "/sign-up",
];
const ORIGINS = { base, auth, api };
for (const [name, origin] of Object.entries(ORIGINS)) {
  for (const path of PATHS) {
    await send(`${name} GET`, origin + path);
    await send(`${name} GET gzip`, origin + path, { headers: { "Accept-Encoding": "gzip" } });
    await send(`${name} HEAD`, origin + path, { method: "HEAD" });
    await send(`${name} POST`, origin + path, { method: "POST", body: "" });
    await send(`${name} DELETE`, origin + path, { method: "DELETE" });
    await send(`${name} OPTIONS`, origin + path, {
      method: "OPTIONS",
      headers: {
        Origin: "https://console.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
      },
    });
    await send(`${name} OPTIONS foreign`, origin + path, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "GET" },
    });
  }
}
// Wrong host.
await send("wrong host", `${base}/health`, { headers: { Host: "elsewhere.example" } });

// 2. MCP messages on the onboarding endpoint, and every tool.
await recordOnboarding(rec, `${auth}/mcp`);

// 3. The OAuth journey as the demo owner.
const journey = await recordOAuthJourney(rec, { auth, api, mailPath: server.mailPath });

// 4. The workspace with the token, and without; the account pages and the revocation after it.
const workspace = `${api}/api/mcp`;
await recordWorkspace(rec, workspace, { Authorization: `Bearer ${journey.accessToken}` });
await recordRevocation(rec, journey, { auth, workspace });

// 5. The operator listener.
const op = { Authorization: `Bearer ${server.adminToken}` };
for (const path of ["/metrics", "/ready", "/v1/", "/v1/businesses/nope/catalogue", "/nope"]) {
  for (const h of [{}, op]) {
    await send(`admin ${path}`, admin + path, { headers: h });
    await send(`admin PUT ${path}`, admin + path, {
      method: "PUT",
      headers: { ...h, "Content-Type": "application/json" },
      body: "{}",
    });
  }
}
await Deno.writeTextFile(out, rec.records.join("\n") + "\n");
console.error(`transcript: ${rec.records.length} requests`);
await server.stop();
