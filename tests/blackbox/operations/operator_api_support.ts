// The operator API test server: a workspace server with the operator listener on and a token
// file, a request helper carrying the operator's token, and a catalogue to replace.
import assert from "node:assert/strict";
import { startWorkspaceServer, type WorkspaceServer } from "../support/workspace_support.ts";
import { type TestServerOptions } from "../support/harness.ts";
import { freePorts } from "../../../testkit/ports.ts";

/** The operator's bearer token, written to the token file. */
export const TOKEN = "op-" + "k".repeat(40);

async function tokenFile(): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/admin-token`;
  await Deno.writeTextFile(path, `${TOKEN}\n`, { mode: 0o600 });
  return { path, remove: () => Deno.remove(dir, { recursive: true }) };
}

export interface OperatorServer extends WorkspaceServer {
  readonly adminUrl: string;
  /** A request to the operator listener with the operator's token (or `auth` instead). */
  api(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; json: Json }>;
  /** The structuredContent of a workspace tool call by an agent holding every read scope. */
  agentReads(tool: string, args?: Record<string, unknown>): Promise<Json>;
}

// deno-lint-ignore no-explicit-any
export type Json = any;

/**
 * A workspace server with the operator listener on, and the operator API on with a token file
 * unless `withToken` is false.
 */
export async function startOperatorServer(
  withToken = true,
  options: TestServerOptions = {},
): Promise<OperatorServer> {
  const file = await tokenFile();
  const ws = await startWorkspaceServer({
    VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${freePorts(1)[0]}`,
    ...(withToken ? { VESTIBULE_ADMIN_TOKEN_FILE: file.path } : {}),
  }, options);
  const adminUrl = ws.server.adminUrl!;
  const { token: agent } = await ws.token(["app.access", "triggers.read", "billing.read"]);
  return {
    ...ws,
    adminUrl,
    async api(method, path, body, headers = {}) {
      const response = await fetch(`${adminUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          ...headers,
        },
        ...(body === undefined
          ? {}
          : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        json: text ? JSON.parse(text) : null,
      };
    },
    async agentReads(tool, args = {}) {
      const { status, message } = await ws.call(agent, tool, args);
      assert.equal(status, 200);
      assert.ok(!message.result.isError, JSON.stringify(message.result));
      return message.result.structuredContent;
    },
    async close() {
      await ws.close();
      await file.remove();
    },
  };
}

/** A whole catalogue: two workflows, a trigger, a pack and billing with one invoice. */
export const CATALOGUE = {
  workflows: [
    {
      id: "wf-refunds",
      name: "Refund triage",
      description: "Drafts replies to refund requests.",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
    },
    {
      id: "wf-sync",
      name: "Order sync",
      description: "",
      kind: "live",
      costPerRunCents: 0,
      status: "paused",
    },
  ],
  triggers: [
    {
      id: "trg-refund",
      name: "New refund",
      event: "refund.requested",
      workflowId: "wf-refunds",
      enabled: true,
    },
  ],
  packs: [
    {
      id: "pack-apparel",
      name: "Apparel",
      vertical: "apparel",
      enabled: true,
      version: "1.2.0",
      latestVersion: "1.3.0",
      settings: { returnWindowDays: 30, sizeCharts: true, tone: "warm" },
    },
  ],
  billing: {
    subscription: {
      plan: "growth",
      status: "active",
      seats: 3,
      monthlyCents: 59_700,
      paymentMethod: "visa ending 4242",
      usage: { runs: 12, includedRuns: 1_000 },
      renewsAt: 1_900_000_000_000,
    },
    invoices: [
      {
        id: "inv-1",
        number: "A-0001",
        amountCents: 59_700,
        currency: "USD",
        status: "paid",
        issuedAt: 1_800_000_000_000,
      },
    ],
  },
};
