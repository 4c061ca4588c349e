// Shared set-up of the workspace black-box tests: a real server, an owner and a member of
// one business, real access tokens from the OAuth grant code, and a small MCP caller.
import { createAccounts } from "../../../src/accounts/accounts.ts";
import type { Accounts } from "../../../src/accounts/model.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { createWorkspace, type Workspace } from "../../../src/workspace/domain/workspace.ts";
import { createSseDecoder } from "../../../src/mcp/sse.ts";
import { type Browser, signInThroughForms, type tempOutbox } from "./accounts_browser.ts";
import { startTestServer, type TestServer, type TestServerOptions } from "./harness.ts";

export const PROTOCOL_VERSION = "2025-06-18";

export interface WorkspaceServer {
  readonly server: TestServer;
  readonly accounts: Accounts;
  readonly workspace: Workspace;
  readonly businessId: string;
  readonly ownerId: string;
  readonly memberId: string;
  /** A real access token for the account in the business, as the token endpoint issues it. */
  token(
    scopes: readonly string[],
    options?: { accountId?: string; clientId?: string; businessId?: string },
  ): Promise<{ token: string; grantId: string }>;
  /** POSTs one JSON-RPC message to {api_url}/api/mcp with the transport headers. */
  post(token: string | null, message: unknown, headers?: Record<string, string>): Promise<Response>;
  /** tools/call; returns the HTTP response and, for a 200, the parsed JSON-RPC message. */
  call(
    token: string,
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ status: number; response: Response; message: RpcResult }>;
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
export type RpcResult = any;

export async function startWorkspaceServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<WorkspaceServer> {
  const server = await startTestServer(env, options);
  const now = options.now ?? Date.now;
  const accounts = createAccounts(server.store, now);
  const { account, business } = await accounts.createAccountWithBusiness(
    "owner@example.com",
    "Acme Outdoor",
  );
  const member = await accounts.addMember(business.id, "member@example.com", "member");
  let id = 0;
  const post = (token: string | null, message: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.apiUrl}/api/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
        ...headers,
      },
      body: typeof message === "string" ? message : JSON.stringify(message),
    });
  return {
    server,
    accounts,
    workspace: createWorkspace(server.store),
    businessId: business.id,
    ownerId: account.id,
    memberId: member.accountId,
    async token(scopes, options = {}) {
      const { grantId, tokens } = await issueGrant({
        config: server.config,
        store: server.store,
        now,
      }, {
        accountId: options.accountId ?? account.id,
        businessId: options.businessId ?? business.id,
        clientId: options.clientId ?? "test-client",
        scopes,
      });
      return { token: tokens.access_token, grantId };
    },
    post,
    async call(token, name, args = {}) {
      const response = await post(token, {
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name, arguments: args },
      });
      const message = response.status === 200 ? await rpcMessage(response) : await response.text();
      return { status: response.status, response, message };
    },
    close: () => server.close(),
  };
}

/**
 * The JSON-RPC response of a 200: its JSON body, or the last message of its event stream (the
 * server's choice for a call that takes long).
 */
export async function rpcMessage(response: Response): Promise<RpcResult> {
  if (response.headers.get("Content-Type") !== "text/event-stream") return await response.json();
  let last: string | undefined;
  const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(
    createSseDecoder(),
  );
  for await (const data of events) last = data;
  return JSON.parse(last!);
}

/** A browser signed in as `email` through the sign-in form and the link mailed to `outbox`. */
export async function signIn(
  ws: WorkspaceServer,
  outbox: Awaited<ReturnType<typeof tempOutbox>>,
  email: string,
): Promise<Browser> {
  return await signInThroughForms(ws.server.authUrl, outbox, email);
}
