import assert from "node:assert/strict";
import { Browser, followLink, submitForm, tempOutbox } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";

interface ToolResult {
  readonly isError?: boolean;
  readonly content: { type: string; text: string }[];
  readonly structuredContent?: Record<string, unknown>;
}

/** tools/call on {auth_url}/mcp after an initialize, as an MCP client does. */
async function callTool(
  authUrl: string,
  name: string,
  args: unknown,
  headers: Record<string, string> = {},
): Promise<ToolResult> {
  const post = async (body: unknown, version?: string) => {
    const response = await fetch(`${authUrl}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...(version ? { "MCP-Protocol-Version": version } : {}),
      },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    return await response.json();
  };
  const init = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  const reply = await post(
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } },
    init.result.protocolVersion,
  );
  assert.ok(reply.result, JSON.stringify(reply));
  return reply.result as ToolResult;
}

Deno.test("onboarding account tools send mail only when the account holder authorized it", async (t) => {
  const outbox = await tempOutbox();
  const server = await startTestServer({ VESTIBULE_MAIL: outbox.env });
  const auth = server.authUrl;
  try {
    await t.step("both tools are listed with their schemas", async () => {
      const response = await fetch(`${auth}/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      const { result } = await response.json();
      const names = result.tools.map((tool: { name: string }) => tool.name);
      assert.ok(names.includes("request_sign_up"), names.join());
      assert.ok(names.includes("request_sign_in_link"), names.join());
      const signUp = result.tools.find((tool: { name: string }) => tool.name === "request_sign_up");
      assert.deepEqual(
        Object.keys(signUp.inputSchema.properties).sort(),
        ["accountHolderAuthorized", "businessName", "email"],
      );
      assert.equal(signUp.annotations.readOnlyHint, false);
    });

    const unauthorized = [
      { name: "request_sign_up", args: { email: "a@example.com", businessName: "A" } },
      {
        name: "request_sign_up",
        args: { email: "a@example.com", businessName: "A", accountHolderAuthorized: false },
      },
      { name: "request_sign_in_link", args: { email: "a@example.com" } },
      {
        name: "request_sign_in_link",
        args: { email: "a@example.com", accountHolderAuthorized: false },
      },
    ];
    for (const { name, args } of unauthorized) {
      await t.step(
        `${name} with accountHolderAuthorized=${args.accountHolderAuthorized} sends nothing`,
        async () => {
          const result = await callTool(auth, name, args);
          assert.equal(result.isError, true);
          assert.match(
            result.content[0]!.text,
            /Nothing was sent: .* needs the account holder's authorization/,
          );
          assert.equal((await outbox.read()).length, 0);
        },
      );
    }

    await t.step("a bad e-mail is an isError result naming the field", async () => {
      const result = await callTool(auth, "request_sign_in_link", {
        email: "nope",
        accountHolderAuthorized: true,
      });
      assert.equal(result.isError, true);
      assert.match(result.content[0]!.text, /e-mail address/);
    });

    await t.step(
      "request_sign_up sends the form's mail; its link creates the account",
      async () => {
        const result = await callTool(auth, "request_sign_up", {
          email: "Agent.Owner@example.com",
          businessName: "Agent Shop",
          accountHolderAuthorized: true,
        });
        assert.equal(result.isError ?? false, false, result.content[0]?.text);
        assert.equal(result.structuredContent?.status, "sent");
        const mail = (await outbox.read()).at(-1)!;
        assert.equal(mail.to, "agent.owner@example.com");
        assert.equal(mail.subject, "Confirm your sign-up for Agent Shop on Vestibule");
        assert.ok(!JSON.stringify(result).includes(new URL(mail.link).searchParams.get("token")!));
        const browser = new Browser();
        assert.equal((await followLink(browser, mail.link)).status, 303);
        assert.match((await browser.get(`${auth}/account`)).text, /Agent Shop/);
      },
    );

    await t.step("request_sign_in_link answers alike for known and unknown addresses", async () => {
      const known = await callTool(auth, "request_sign_in_link", {
        email: "agent.owner@example.com",
        accountHolderAuthorized: true,
      });
      const unknown = await callTool(auth, "request_sign_in_link", {
        email: "ghost@example.com",
        accountHolderAuthorized: true,
      });
      const strip = (r: ToolResult, email: string) => JSON.stringify(r).replaceAll(email, "EMAIL");
      assert.equal(strip(unknown, "ghost@example.com"), strip(known, "agent.owner@example.com"));
      const mails = await outbox.read();
      const signIn = mails.find((m) =>
        m.to === "agent.owner@example.com" && m.subject === "Sign in to Vestibule"
      );
      assert.match(signIn!.link, /\/sign-in\/verify\?token=/);
      assert.equal(mails.find((m) => m.to === "ghost@example.com")?.link, `${auth}/sign-up`);
    });

    await t.step("the per-e-mail limit is shared with the forms", async () => {
      // One mail went to ghost@ above; two more by tool and two by form make five.
      for (let i = 0; i < 2; i++) {
        const ok = await callTool(auth, "request_sign_in_link", {
          email: "ghost@example.com",
          accountHolderAuthorized: true,
        });
        assert.equal(ok.isError ?? false, false);
        const form = await submitForm(new Browser(), `${auth}/sign-in`, `${auth}/sign-in`, {
          email: "ghost@example.com",
        });
        assert.equal(form.status, 200);
      }
      const limited = await callTool(auth, "request_sign_in_link", {
        email: "ghost@example.com",
        accountHolderAuthorized: true,
      });
      assert.equal(limited.isError, true);
      assert.match(limited.content[0]!.text, /too many sign-in or sign-up mails/);
    });
  } finally {
    await server.close();
  }
});

Deno.test("tool-sent mail is budgeted per client address, like the forms", async () => {
  const outbox = await tempOutbox();
  const server = await startTestServer({ VESTIBULE_MAIL: outbox.env, VESTIBULE_TRUST_PROXY: "on" });
  const send = (i: number, address: string) =>
    callTool(server.authUrl, "request_sign_in_link", {
      email: `person${i}@example.com`,
      accountHolderAuthorized: true,
    }, { "X-Forwarded-For": address });
  try {
    for (let i = 0; i < 30; i++) assert.equal((await send(i, "192.0.2.1")).isError ?? false, false);
    const limited = await send(30, "192.0.2.1");
    assert.equal(limited.isError, true);
    assert.match(limited.content[0]!.text, /too many sign-in or sign-up mails/);
    const elsewhere = await send(31, "198.51.100.7");
    assert.equal(elsewhere.isError ?? false, false, "another caller's budget is untouched");
  } finally {
    await server.close();
  }
});
