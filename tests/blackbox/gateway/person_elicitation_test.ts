// "Connect your account" as URL-mode elicitation (issue 36, point 3): a call that needs the
// person's own upstream sign-in asks a client that declared URL mode in its revision's words
// (2025-11-25: error -32042; 2026-07-28: `input_required` with a single-use requestState), the
// link it carries opens for its own person only, and a client that declared nothing keeps the
// tool error with the plain link, byte for byte.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import {
  connect,
  connectPageUrl,
  personBrowser,
  type PersonUpstreamSetup,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { until } from "../support/gateway_support.ts";
import { INITIALIZE, MODERN_META } from "../support/mcp_helpers.ts";
import { Browser } from "../support/accounts_browser.ts";

// The 2026-07-28 shapes, as ../shared/spec/mcp-2026-07-28/schema.ts has them (InputRequiredResult,
// ElicitRequest with ElicitRequestURLParams, ElicitResult, CallToolRequestParams).
interface ElicitRequestURLParams {
  mode: "url";
  message: string;
  url: string;
}
interface ElicitRequest {
  method: "elicitation/create";
  params: ElicitRequestURLParams;
}
interface InputRequiredResult {
  resultType: "input_required";
  inputRequests?: { [key: string]: ElicitRequest };
  requestState?: string;
}
interface ElicitResult {
  action: "accept" | "decline" | "cancel";
}
interface CallToolRequestParams {
  name: string;
  arguments?: { [key: string]: unknown };
  inputResponses?: { [key: string]: ElicitResult };
  requestState?: string;
  _meta: Record<string, unknown>;
}

const URL_MODE = { elicitation: { url: {} } };

/** `text` with one character of its last part changed (a middle one: every bit of it counts). */
function alter(text: string): string {
  const at = text.lastIndexOf(".") + Math.floor((text.length - text.lastIndexOf(".")) / 2);
  return text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
}
let id = 100;

/** A 2026-07-28 tools/call, its capabilities declaring URL mode unless told otherwise. */
function modernCall(
  setup: PersonUpstreamSetup,
  token: string,
  params: Omit<CallToolRequestParams, "_meta">,
  capabilities: Record<string, unknown> = URL_MODE,
) {
  const body: { jsonrpc: "2.0"; id: number; method: "tools/call"; params: CallToolRequestParams } =
    {
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: {
        ...params,
        _meta: { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities },
      },
    };
  return setup.ws.post(token, body, {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": params.name,
  });
}

/** The input_required result of a 2026-07-28 answer, checked against the schema's shape. */
function inputRequired(message: any): { state: string; url: string } {
  const result = message.result as InputRequiredResult;
  assert.equal(result.resultType, "input_required", JSON.stringify(message));
  const asked = result.inputRequests!["connect"]!;
  assert.equal(asked.method, "elicitation/create");
  assert.equal(asked.params.mode, "url");
  assert.match(asked.params.message, /Connect your Acme CRM account/);
  assert.doesNotMatch(asked.params.message, /https?:/);
  assert.equal(typeof result.requestState, "string");
  return { state: result.requestState!, url: asked.params.url };
}

/** A gateway whose `crm` tools are listed (the owner connected as alice); the member has not. */
async function withListedUpstream(fn: (setup: PersonUpstreamSetup) => Promise<void>) {
  const setup = await startPersonUpstream();
  try {
    const { token } = await setup.ws.token(["app.access", "upstream.crm"]);
    const done = await connect(setup, await personBrowser(setup), "alice");
    assert.equal(done.status, 200, done.text);
    await until(
      "the upstream's tools",
      async () => (await setup.ws.toolNames(token)).includes("crm__echo"),
    );
    await fn(setup);
  } finally {
    await setup.close();
  }
}

Deno.test("2025-11-25: a client that declared URL elicitation at initialize gets -32042 with a link only its person can follow", async () => {
  await withListedUpstream(async (setup) => {
    const { ws } = setup;
    const { token } = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    const initialize = (capabilities: Record<string, unknown>) =>
      ws.post(token, { ...INITIALIZE, params: { ...INITIALIZE.params, capabilities } }, {
        "MCP-Protocol-Version": "2025-11-25",
      });
    const call = async () => {
      const response = await ws.post(token, {
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "crm__whoami", arguments: {} },
      }, { "MCP-Protocol-Version": "2025-11-25" });
      assert.equal(response.status, 200);
      return await response.json();
    };

    // initialize and the call are separate requests: what it declared is remembered.
    assert.equal((await initialize(URL_MODE)).status, 200);
    const asked = await call();
    assert.equal(asked.error.code, -32042, JSON.stringify(asked));
    const [elicitation, ...more] = asked.error.data.elicitations;
    assert.equal(more.length, 0);
    assert.equal(elicitation.mode, "url");
    assert.equal(typeof elicitation.elicitationId, "string");
    assert.match(elicitation.message, /Connect your Acme CRM account/);
    assert.ok(elicitation.url.startsWith(`${connectPageUrl(ws)}&for=`), elicitation.url);

    // Another signed-in person (the owner) opening it is refused in plain words, before anything
    // starts; so is a link whose binding was altered.
    const owner = await personBrowser(setup);
    const foreign = await owner.get(elicitation.url);
    assert.equal(foreign.status, 403);
    assert.match(
      foreign.text,
      /made for another person&#39;s agent|made for another person's agent/,
    );
    const altered = await owner.get(alter(elicitation.url));
    assert.equal(altered.status, 403);

    // Signed out, it leads to the sign-in first, keeping the binding for the check after it.
    const signedOut = await new Browser().get(elicitation.url);
    assert.equal(signedOut.status, 303);
    const signIn = new URL(signedOut.response.headers.get("Location")!);
    assert.equal(signIn.pathname, "/sign-in");
    assert.equal(
      signIn.searchParams.get("return_to"),
      elicitation.url.slice(ws.server.authUrl.length),
    );

    // Its own person follows it to the upstream's sign-in, and the call then works.
    const member = await personBrowser(setup, "member@example.com");
    const done = await connect(setup, member, "bob", elicitation.url);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Connected/);
    const called = await call();
    assert.equal(called.result.content[0].text, "bob", JSON.stringify(called));
  });
});

Deno.test("a client that declared no URL elicitation keeps the tool error with the plain link, byte for byte", async () => {
  await withListedUpstream(async (setup) => {
    const { ws } = setup;
    const expected = (callId: number) =>
      `{"jsonrpc":"2.0","id":${callId},"result":{"content":[{"type":"text","text":"Acme CRM needs you to connect your own account first: connect it at ${
        connectPageUrl(ws)
      }, then call again"}],"isError":true}}`;
    // 2025-11-25, form mode only declared (and, for another client, nothing at all).
    for (const capabilities of [{ elicitation: {} }, null]) {
      const { token } = await ws.token(["app.access", "upstream.crm"], {
        accountId: ws.memberId,
        clientId: capabilities === null ? "plain-client" : "form-client",
      });
      if (capabilities !== null) {
        await ws.post(token, { ...INITIALIZE, params: { ...INITIALIZE.params, capabilities } }, {
          "MCP-Protocol-Version": "2025-11-25",
        });
      }
      const callId = ++id;
      const response = await ws.post(token, {
        jsonrpc: "2.0",
        id: callId,
        method: "tools/call",
        params: { name: "crm__whoami", arguments: {} },
      }, { "MCP-Protocol-Version": "2025-11-25" });
      assert.equal(await response.text(), expected(callId));
    }
    // 2026-07-28 without URL mode: the same tool error, as a complete result.
    const { token } = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    const response = await modernCall(setup, token, { name: "crm__whoami", arguments: {} }, {});
    const message = await response.json();
    assert.equal(message.result.resultType, "complete");
    assert.equal(message.result.isError, true);
    assert.match(message.result.content[0].text, /connect it at .*\/connections\/crm\?business=/);
    assert.doesNotMatch(message.result.content[0].text, /for=/);
  });
});

Deno.test("2026-07-28: input_required with a URL elicitation; the retry asks again until connected, then calls; tampered, foreign and replayed states reach no upstream", async () => {
  await withListedUpstream(async (setup) => {
    const { ws } = setup;
    const member = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    const owner = await ws.token(["app.access", "upstream.crm"]);
    const echo = { name: "crm__echo", arguments: { text: "hello" } };
    const accepted = { connect: { action: "accept" as const } };
    const send = async (token: string, params: Omit<CallToolRequestParams, "_meta">) => {
      const response = await modernCall(setup, token, params);
      assert.equal(response.status, 200);
      return await response.json();
    };

    const first = inputRequired(await send(member.token, echo));
    assert.ok(first.url.startsWith(`${connectPageUrl(ws)}&for=`), first.url);

    // Not connected yet: the retry asks again, with a new state; the first is used up.
    const second = inputRequired(
      await send(member.token, { ...echo, inputResponses: accepted, requestState: first.state }),
    );
    assert.notEqual(second.state, first.state);
    const replayed = await send(member.token, { ...echo, requestState: first.state });
    assert.equal(replayed.error.code, -32602);
    assert.match(replayed.error.message, /requestState was already used/);

    const browser = await personBrowser(setup, "member@example.com");
    const done = await connect(setup, browser, "bob", second.url);
    assert.equal(done.status, 200, done.text);

    // Refused states: altered, for other arguments, another tool, another person's token. None
    // reaches the upstream (the answer is -32602, never the echo), and none uses the state up.
    const tampered = alter(second.state);
    const refusals: [string, Omit<CallToolRequestParams, "_meta">, RegExp][] = [
      [member.token, { ...echo, requestState: tampered }, /not one this server issued/],
      [member.token, { ...echo, requestState: "not-a-state" }, /not one this server issued/],
      [member.token, { ...echo, requestState: 42 as unknown as string }, /must be a string/],
      [
        member.token,
        { name: "crm__echo", arguments: { text: "other" }, requestState: second.state },
        /issued for another call/,
      ],
      [
        member.token,
        { name: "crm__whoami", arguments: {}, requestState: second.state },
        /issued for another call/,
      ],
      [owner.token, { ...echo, requestState: second.state }, /issued to another caller/],
    ];
    for (const [token, params, words] of refusals) {
      const refused = await send(token, params);
      assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
      assert.match(refused.error.message, words);
    }

    // The good retry makes the call, once.
    const called = await send(member.token, {
      ...echo,
      inputResponses: accepted,
      requestState: second.state,
    });
    assert.equal(called.result.resultType, "complete");
    assert.equal(called.result.content[0].text, "hello", JSON.stringify(called));
    const again = await send(member.token, { ...echo, requestState: second.state });
    assert.match(again.error.message, /already used/);
  });
});

Deno.test("2026-07-28: a person who declined the elicitation is not asked again in the same breath", async () => {
  await withListedUpstream(async (setup) => {
    const { ws } = setup;
    const { token } = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    const call = { name: "crm__whoami", arguments: {} };
    const first = inputRequired(await (await modernCall(setup, token, call)).json());
    const declined = await (await modernCall(setup, token, {
      ...call,
      inputResponses: { connect: { action: "decline" } },
      requestState: first.state,
    })).json();
    assert.equal(declined.result.resultType, "complete");
    assert.equal(declined.result.isError, true);
    assert.match(declined.result.content[0].text, /connect your own account first/);
  });
});
