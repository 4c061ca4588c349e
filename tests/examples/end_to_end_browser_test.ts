// The whole bridge, as people and programs nobody here wrote use it: an agent (the official
// MCP SDK client, with its OAuth provider) asks for a paid workflow run, the owner approves
// it in Chromium, the example receiver gets the signed event, runs its command and reports
// the run through the operator API, and the agent reads it `succeeded` with list_workflow_runs.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { chromium } from "npm:playwright-core@^1.56.0";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createWorkspace } from "../../src/workspace/domain/workspace.ts";
import { consent, oauthFixture, ownerBrowser } from "../blackbox/support/oauth_helpers.ts";
import { MemoryProvider } from "../interop/memory_provider.ts";
import { integration } from "./example_receiver.ts";

const CHROMIUM = "/usr/bin/chromium";

let available = true;
try {
  Deno.statSync(CHROMIUM);
} catch {
  available = false;
  console.warn(
    `skipping the end-to-end browser test: ${CHROMIUM} is not installed (.ci/run installs it)`,
  );
}

Deno.test({
  name:
    "an agent's paid run, approved in Chromium, is carried out by the example receiver and read back succeeded",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const shared = await integration();
    // Real time: the events' signatures carry it, and the receiver refuses stale ones.
    const fx = await oauthFixture(shared.serverEnv, { clock: { now: Date.now, advance() {} } });
    const example = await shared.start();
    const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
    const [business] = await createAccounts(fx.server.store, Date.now).listBusinesses();
    await createWorkspace(fx.server.store).workflows.put(business!.id, {
      id: "wf-refunds",
      name: "Refund triage",
      description: "Sorts refund requests",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const mcpUrl = new URL(`${fx.server.apiUrl}/api/mcp`);
    const provider = new MemoryProvider("http://127.0.0.1:8976/callback");
    const connect = () => ({
      client: new Client({ name: "refund-agent", version: "1.0.0" }),
      transport: new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }),
    });
    /** The human consents to exactly `scopes`; the agent finishes its authorization. */
    const authorize = async (transport: StreamableHTTPClientTransport, scopes: string[]) => {
      const location = await consent(human, fx, provider.authorizationUrls.at(-1)!.href, {
        scopes,
      });
      await transport.finishAuth(location.searchParams.get("code")!);
    };
    const userDataDir = await Deno.makeTempDir({ prefix: "vestibule-chromium-" });
    const browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    let { client, transport } = connect();
    try {
      await assert.rejects(client.connect(transport), UnauthorizedError);
      await authorize(transport, ["app.access"]);
      ({ client, transport } = connect());
      await client.connect(transport);

      // Starting a run needs workflows.run: the SDK meets the step-up and the human grants it.
      const start = { name: "start_workflow", arguments: { workflowId: "wf-refunds" } };
      await assert.rejects(client.callTool(start), UnauthorizedError);
      await authorize(transport, ["app.access", "workflows.run"]);
      const started = await client.callTool(start);
      const pending = started.structuredContent as { status: string; approvalUrl: string };
      assert.equal(pending.status, "pending", JSON.stringify(started));

      const page = browser.pages()[0] ?? await browser.newPage();
      await page.goto(`${fx.auth}/sign-in`);
      await page.fill("#email", "owner@example.com");
      await page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await page.waitForLoadState();
      await page.goto((await fx.outbox.read()).at(-1)!.link);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForLoadState();
      await page.goto(pending.approvalUrl);
      assert.match(await page.content(), /Refund triage/);
      await page.getByRole("button", { name: "Approve" }).click();
      await page.waitForLoadState();

      const [run] = await createWorkspace(fx.server.store).runs.list(business!.id);
      assert.ok(run, "the approval started a run");
      await example.waitFor(
        "the run succeeded",
        (l) => l.run === run.id && l.status === "succeeded",
      );
      const listed = await client.callTool({ name: "list_workflow_runs", arguments: {} });
      const { runs } = listed.structuredContent as {
        runs: { id: string; status: string; result: string | null }[];
      };
      assert.deepEqual(
        runs.map((r) => [r.id, r.status, r.result]),
        [[run.id, "succeeded", "refunds triaged by wf-refunds"]],
      );
      assert.deepEqual(await shared.runs(), [run.id]);
    } finally {
      await client.close();
      await browser.close();
      await example.stop();
      await fx.close();
      await shared.remove();
      await Deno.remove(userDataDir, { recursive: true });
    }
  },
});
