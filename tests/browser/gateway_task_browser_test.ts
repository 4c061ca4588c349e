// A gated call as an MCP task, with a person in a real browser (Debian's chromium through
// playwright-core): the official MCP SDK v1 client's experimental tasks API (2025-11-25) calls
// server-everything's gated get-sum and waits, polling a working task; the owner opens the
// approval page the task's status message names and presses Approve; the client's stream ends
// with the upstream's result. A second task, cancelled by the client, reads "Withdrawn" on the
// page, which offers no Approve.
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { tempOutbox } from "../blackbox/support/accounts_browser.ts";
import { until, writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";
import { signIn, startWorkspaceServer } from "../blackbox/support/workspace_support.ts";
import { startEverythingHttp } from "../../testkit/upstreams.ts";
import { CHROMIUM, chromiumAvailable, SHOTS } from "./chromium.ts";
import { checkPage } from "./page_check.ts";

const available = chromiumAvailable("the browser task approval test");

Deno.test({
  name: "an owner in Chromium approves the SDK agent's gated call while its task waits",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await Deno.mkdir(SHOTS, { recursive: true });
    const everything = await startEverythingHttp();
    const file = await writeUpstreamsFile([
      { name: "everything", title: "Everything", url: everything.url, gated: ["get-sum"] },
    ]);
    const outbox = await tempOutbox();
    const ws = await startWorkspaceServer({
      VESTIBULE_UPSTREAMS: file,
      VESTIBULE_MAIL: outbox.env,
      VESTIBULE_WORKSPACE_TOOLS: "gateway",
    });
    const { token } = await ws.token(["app.access", "upstream.everything"]);
    const client = new Client({ name: "vestibule-task-browser", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${ws.server.apiUrl}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const owner = await signIn(ws, outbox, "owner@example.com");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      await client.connect(transport);
      await client.listTools();
      const context = await browser.newContext();
      await context.addCookies(
        [...owner.cookies].map(([name, value]) => ({ name, value, url: ws.server.authUrl })),
      );
      const page = await context.newPage();

      await t.step("the client waits on a working task until the owner approves", async () => {
        const statuses: string[] = [];
        let created: { taskId: string; statusMessage?: string } | undefined;
        let result: Record<string, unknown> | undefined;
        const stream = (async () => {
          for await (
            const message of client.experimental.tasks.callToolStream({
              name: "everything__get-sum",
              arguments: { a: 40, b: 2 },
            })
          ) {
            if (message.type === "taskCreated") created = message.task;
            if (message.type === "taskStatus") statuses.push(message.task.status);
            if (message.type === "result") result = message.result;
            if (message.type === "error") throw message.error;
          }
        })();
        // The person acts once the client has seen its task working at least once.
        await until("the client polling a working task", () => statuses[0] === "working");
        const link = created!.statusMessage!.match(/https?:\/\/\S+\/approvals\/[0-9a-f-]{36}/)?.[0];
        assert.ok(link, created!.statusMessage);
        await page.goto(link);
        assert.equal(
          await page.locator("#gate-status").innerText(),
          "Waiting for an owner's decision",
        );
        await page.getByRole("button", { name: "Approve" }).click();
        await page.waitForLoadState();
        assert.equal(await page.locator("#gate-status").innerText(), "Approved and applied");
        await stream;
        assert.equal(statuses.at(-1), "completed");
        const text = (result?.["content"] as { text: string }[])[0]!.text;
        assert.match(text, /42/);
      });

      await t.step("a task the client cancels reads withdrawn, with no Approve", async () => {
        const stream = client.experimental.tasks.callToolStream({
          name: "everything__get-sum",
          arguments: { a: 1, b: 2 },
        });
        const first = await stream.next();
        const taskId = first.value?.type === "taskCreated" ? first.value.task.taskId : "";
        await stream.return(undefined);
        assert.equal((await client.experimental.tasks.cancelTask(taskId)).status, "cancelled");
        await page.goto(`${ws.server.authUrl}/approvals/${taskId}`);
        assert.equal(
          await page.locator("#gate-status").innerText(),
          "Withdrawn by the agent that asked; it can no longer be approved",
        );
        assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
        await checkPage(page, "14-approval-withdrawn-by-task-cancel");
      });
    } finally {
      await browser.close();
      await client.close();
      await ws.close();
      await everything.kill();
    }
  },
});
