// Properties of both MCP endpoints, in-process through the whole app (Host router, request
// log, transport, dispatch, tools; the workspace's bearer check in front): whatever is
// posted, the answer is a result or a precise error, never a 5xx, an internal error, an
// unbounded body or a secret in the logs.
import {
  HEADER_MISMATCH,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  TRANSPORT_ERROR,
  UNSUPPORTED_PROTOCOL_VERSION,
} from "../../src/mcp/errors.ts";
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { issueGrant } from "../../testkit/issue_grant.ts";
import { SUPPORTED_SCOPES } from "../../src/oauth/scopes.ts";
import { DEMO_OWNER_EMAIL } from "../../src/workspace/domain/demo.ts";
import { createTestApp, type TestApp } from "../blackbox/support/harness.ts";
import {
  assertStatusIn,
  framedBody,
  framing,
  fuzzRuns,
  headerText,
  hostileText,
  readBounded,
  sendTo,
  sizesAround,
} from "./fuzz_support.ts";
import { anyValue, bodyOf, messageLike, requestId } from "./json_rpc_arbitraries.ts";

const TRUSTED_ORIGIN = "https://app.example.com";
const TRANSPORT_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};
/** Far above any page or tool result, far below what an unbounded answer would reach. */
const MAX_ANSWER_BYTES = 256 * 1024;
/** JSON-RPC errors a client can cause; -32603 (internal error) would be a bug. */
const CLIENT_ERROR_CODES = new Set([
  PARSE_ERROR,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  INVALID_PARAMS,
  TRANSPORT_ERROR,
  HEADER_MISMATCH,
  UNSUPPORTED_PROTOCOL_VERSION,
]);

// deno-lint-ignore no-explicit-any
type Json = any;

interface ToolInfo {
  readonly name: string;
  readonly inputSchema: Json;
  readonly annotations?: { readonly readOnlyHint?: boolean };
}

interface Endpoint {
  readonly url: string;
  readonly maxBodyBytes: number;
  /** Transport headers plus, on the workspace, the bearer token. */
  readonly headers: Readonly<Record<string, string>>;
  readonly tools: readonly ToolInfo[];
  /** tools/list cursors the endpoint issued. */
  readonly cursors: readonly string[];
}

interface Fixture {
  readonly app: TestApp;
  readonly send: ReturnType<typeof sendTo>;
  readonly onboarding: Endpoint;
  readonly workspace: Endpoint;
  readonly token: string;
  /** Strings the read tools returned (ids, names), for arguments that reach past validation. */
  readonly known: readonly string[];
}

/** The demo business and a token with every scope for its owner, so every tool is callable. */
async function _fixture(): Promise<Fixture> {
  const app = await createTestApp({
    VESTIBULE_RATE_LIMITS: "off",
    VESTIBULE_DEMO: "on",
    VESTIBULE_TRUSTED_ORIGINS: TRUSTED_ORIGIN,
    VESTIBULE_MCP_PAGE_SIZE: "3",
  });
  const send = sendTo(app);
  const owner = (await app.accounts.findAccountByEmail(DEMO_OWNER_EMAIL))!;
  const business = (await app.accounts.listBusinessesOf(owner.id))[0]!.business;
  const { tokens } = await issueGrant({ config: app.config, store: app.store, now: Date.now }, {
    accountId: owner.id,
    businessId: business.id,
    clientId: "fuzz-client",
    scopes: SUPPORTED_SCOPES,
  });
  const token = tokens.access_token;
  const rpc = async (
    url: string,
    headers: Record<string, string>,
    method: string,
    params: Json,
  ) => {
    const response = await send(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    assert.equal(response.status, 200);
    return (await response.json()).result;
  };
  const endpoint = async (url: string, maxBodyBytes: number, headers: Record<string, string>) => {
    const tools: ToolInfo[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await rpc(url, headers, "tools/list", cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined) cursors.push(cursor);
    } while (cursor !== undefined);
    return { url, maxBodyBytes, headers, tools, cursors };
  };
  const onboarding = await endpoint(`${app.config.authUrl}/mcp`, 16 * 1024, TRANSPORT_HEADERS);
  const workspace = await endpoint(`${app.config.apiUrl}/api/mcp`, app.config.workspaceMaxBody, {
    ...TRANSPORT_HEADERS,
    Authorization: `Bearer ${token}`,
  });
  const known = new Set<string>();
  for (const tool of workspace.tools.filter((t) => t.annotations?.readOnlyHint)) {
    const result = await rpc(workspace.url, workspace.headers, "tools/call", {
      name: tool.name,
      arguments: {},
    });
    _collectStrings(result.structuredContent, known);
  }
  return { app, send, onboarding, workspace, token, known: [...known].slice(0, 300) };
}

function _collectStrings(value: unknown, into: Set<string>): void {
  if (typeof value === "string" && value.length <= 100) into.add(value);
  else if (Array.isArray(value)) { for (const item of value) _collectStrings(item, into); }
  else if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) _collectStrings(item, into);
  }
}

/** Values for a JSON Schema (as the tools publish it), wrong now and then. */
function _valueFor(schema: Json, known: fc.Arbitrary<string>, depth = 0): fc.Arbitrary<unknown> {
  const wrong = anyValue;
  const right = ((): fc.Arbitrary<unknown> => {
    if (schema === undefined || schema === true || depth > 3) return wrong;
    if ("const" in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
    const members = schema.anyOf ?? schema.oneOf;
    if (Array.isArray(members)) {
      return fc.oneof(...members.map((m: Json) => _valueFor(m, known, depth + 1)));
    }
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case "string":
        return fc.oneof(known, hostileText, fc.emailAddress(), fc.webUrl());
      case "integer":
        return fc.oneof(fc.integer({ min: -2, max: 1000 }), fc.constantFrom(1e9, 2 ** 53));
      case "number":
        return fc.oneof(fc.double(), fc.integer({ min: -2, max: 1000 }));
      case "boolean":
        return fc.boolean();
      case "array":
        return fc.array(_valueFor(schema.items, known, depth + 1), { maxLength: 4 });
      case "object":
        return _objectFor(schema, known, depth + 1);
      default:
        return wrong;
    }
  })();
  return fc.oneof({ weight: 6, arbitrary: right }, wrong);
}

function _objectFor(schema: Json, known: fc.Arbitrary<string>, depth: number) {
  const properties: Record<string, Json> = schema.properties ?? {};
  const names = Object.keys(properties);
  const model = Object.fromEntries(
    names.map((name) => [name, _valueFor(properties[name], known, depth)]),
  );
  return fc.tuple(
    fc.record(model, { requiredKeys: [] }),
    fc.dictionary(hostileText, anyValue, { maxKeys: 1 }),
    fc.boolean(),
  ).map(([known, extra, withExtra]) => (withExtra ? { ...extra, ...known } : known));
}

/** Messages for an endpoint: mostly tool calls and pages of its own catalogue, some anything. */
function _messages(endpoint: Endpoint, known: readonly string[]): fc.Arbitrary<unknown> {
  const strings = known.length > 0 ? fc.constantFrom(...known) : hostileText;
  const call = fc.oneof(
    ...endpoint.tools.map((tool) =>
      fc.record({
        name: fc.constant(tool.name),
        arguments: _valueFor(tool.inputSchema, strings),
        _meta: fc.record({ progressToken: requestId }),
      }, { requiredKeys: ["name"] })
    ),
  );
  const cursor = fc.oneof(
    fc.constantFrom(...endpoint.cursors),
    fc.constantFrom(...endpoint.cursors).chain((c) =>
      fc.nat(c.length - 1).map((i) => c.slice(0, i) + (c[i] === "A" ? "B" : "A") + c.slice(i + 1))
    ),
    hostileText,
    anyValue,
  );
  const request = (method: string, params: fc.Arbitrary<unknown>) =>
    fc.record({
      jsonrpc: fc.constant("2.0"),
      id: requestId,
      method: fc.constant(method),
      params,
    }, { requiredKeys: ["jsonrpc", "id", "method"] });
  return fc.oneof(
    { weight: 6, arbitrary: request("tools/call", call) },
    { weight: 2, arbitrary: request("tools/list", fc.record({ cursor }, { requiredKeys: [] })) },
    request(
      "initialize",
      fc.record({
        protocolVersion: fc.oneof(fc.constantFrom("2025-11-25", "2025-06-18"), hostileText),
        capabilities: fc.oneof(fc.constant({}), anyValue),
        clientInfo: fc.oneof(fc.record({ name: hostileText, version: hostileText }), anyValue),
      }, { requiredKeys: [] }),
    ),
    { weight: 2, arbitrary: messageLike },
  );
}

const headerChanges = fc.record({
  "Content-Type": fc.oneof(
    fc.constantFrom("application/json; charset=utf-8", "APPLICATION/JSON", "text/plain", ""),
    headerText,
  ),
  "Accept": fc.oneof(
    fc.constantFrom("application/json", "*/*", "text/event-stream, application/json;q=0.5"),
    headerText,
  ),
  "MCP-Protocol-Version": fc.oneof(fc.constantFrom("2025-06-18", "2024-11-05", ""), headerText),
  "Origin": fc.oneof(fc.constantFrom(TRUSTED_ORIGIN, "https://evil.example", "null"), headerText),
}, { requiredKeys: [] });

/** Most cases keep the transport headers right, so that the message itself is what varies. */
const headerVariation = fc.oneof(
  { weight: 5, arbitrary: fc.constant({}) },
  headerChanges,
);

function _parseAnswer(type: string | null, text: string): Json[] {
  if (type === "application/json") return [JSON.parse(text)];
  assert.equal(type, "text/event-stream");
  return text.split("\n\n").filter((event) => event !== "").map((event) => {
    const data = event.split("\n").find((line) => line.startsWith("data: "));
    assert.ok(data !== undefined, `an event without data: ${JSON.stringify(event)}`);
    return JSON.parse(data.slice("data: ".length));
  });
}

/** The checks every answer of an MCP endpoint passes, whatever was posted. */
async function _checkAnswer(fx: Fixture, response: Response, body: Uint8Array) {
  assertStatusIn(response, [200, 202, 400, 403, 406, 413, 415]);
  const text = await readBounded(response, MAX_ANSWER_BYTES);
  if (response.status === 202) {
    assert.equal(text, "");
  } else {
    const messages = _parseAnswer(response.headers.get("Content-Type"), text);
    const last = messages.at(-1);
    assert.equal(last.jsonrpc, "2.0");
    if ("error" in last) {
      assert.ok(CLIENT_ERROR_CODES.has(last.error.code), JSON.stringify(last.error));
      assert.ok(typeof last.error.message === "string" && last.error.message !== "");
    } else {
      assert.equal(response.status, 200);
      const sent = JSON.parse(new TextDecoder().decode(body));
      assert.deepEqual(last.id, sent.id, "a result answers the request's id");
      if (sent.method === "tools/call") {
        assert.ok(Array.isArray(last.result.content) && last.result.content.length > 0);
        if (!last.result.isError) assert.equal(typeof last.result.structuredContent, "object");
      }
    }
  }
  const logs = fx.app.logs.splice(0);
  for (const line of logs) {
    assert.ok(!line.includes(fx.token), "the bearer token is in the log");
    assert.ok(!line.includes('"level":"error"'), line);
  }
}

async function _post(fx: Fixture, endpoint: Endpoint, body: Uint8Array, headers: object) {
  const merged: Record<string, string> = { ...endpoint.headers };
  for (const [name, value] of Object.entries(headers)) merged[name] = value;
  return await fx.send(endpoint.url, {
    method: "POST",
    headers: merged,
    body: body as Uint8Array<ArrayBuffer>,
  });
}

Deno.test("fuzz MCP endpoints: anything posted gets a result or a precise error", async (t) => {
  const fx = await _fixture();
  try {
    for (const name of ["onboarding", "workspace"] as const) {
      await t.step(name, async () => {
        const endpoint = fx[name];
        const bodies = bodyOf(_messages(endpoint, fx.known));
        await fc.assert(
          fc.asyncProperty(bodies, headerVariation, async (body, headers) => {
            fx.app.logs.length = 0; // a failed case may leave its lines behind
            await _checkAnswer(fx, await _post(fx, endpoint, body, headers), body);
          }),
          fuzzRuns(1000),
        );
      });
    }
  } finally {
    fx.app.store.close();
  }
});

Deno.test("fuzz MCP endpoints: a body over the cap is 413, however it is sent", async (t) => {
  const fx = await _fixture();
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  try {
    for (const name of ["onboarding", "workspace"] as const) {
      await t.step(name, async () => {
        const endpoint = fx[name];
        const cap = endpoint.maxBodyBytes;
        await fc.assert(
          fc.asyncProperty(sizesAround(cap, ping.length), framing, async (n, frame) => {
            fx.app.logs.length = 0;
            // Trailing white space keeps the JSON valid at every size.
            const text = ping + " ".repeat(n - ping.length);
            const response = await fx.send(endpoint.url, framedBody(text, frame, endpoint.headers));
            const answer = JSON.parse(await readBounded(response, MAX_ANSWER_BYTES));
            if (n > cap) {
              assert.equal(response.status, 413);
              assert.equal(
                answer.error.message,
                `Cannot read request body: exceeds ${cap} bytes`,
              );
            } else {
              assert.equal(response.status, 200);
              assert.deepEqual(answer, { jsonrpc: "2.0", id: 1, result: {} });
            }
          }),
          fuzzRuns(300),
        );
      });
    }
  } finally {
    fx.app.store.close();
  }
});

Deno.test("fuzz workspace bearer check: only the issued token passes, and no credential is echoed", async () => {
  const fx = await _fixture();
  const { token } = fx;
  const [head, payload] = token.split(".") as [string, string, string];
  const segmentBytes = (jwt: string) =>
    jwt.split(".").map((part) => atob(part.replaceAll("-", "+").replaceAll("_", "/")));
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  const credential = fc.oneof(
    fc.nat(token.length - 1).map((i) => `Bearer ${flip(token, i)}`),
    fc.nat(token.length).map((cut) => `Bearer ${token.slice(0, cut)}`),
    fc.constantFrom(`bearer ${token}`, `Bearer  ${token}`, `Bearer ${token} `, `Basic ${token}`),
    fc.constantFrom(
      "Bearer",
      "Bearer ",
      "Bearer a.b.c",
      "Bearer ===",
      `Bearer ${head}.${payload}.`,
    ),
    headerText.map((s) => `Bearer ${s}`),
    headerText,
    fc.constant(null),
  );
  const where = fc.constantFrom("header", "query", "both");
  try {
    await fc.assert(
      fc.asyncProperty(credential, where, async (authorization, place) => {
        fx.app.logs.length = 0;
        const headers: Record<string, string> = { ...TRANSPORT_HEADERS };
        if (authorization !== null && place !== "query") headers.Authorization = authorization;
        const query = place === "header"
          ? ""
          : `?access_token=${encodeURIComponent(authorization?.replace(/^\S+\s*/, "") ?? "")}`;
        const response = await fx.send(`${fx.workspace.url}${query}`, {
          method: "POST",
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        });
        assertStatusIn(response, [200, 401]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        const logs = fx.app.logs.splice(0);
        if (response.status === 200) {
          // Only the issued token passes; a base64url spelling of the same bytes is the same.
          const presented = headers.Authorization!.replace(/^\S+ +/, "");
          assert.equal(place, "header");
          assert.deepEqual(segmentBytes(presented), segmentBytes(token));
          return;
        }
        assert.match(
          response.headers.get("WWW-Authenticate") ?? "",
          new RegExp(
            `^Bearer resource_metadata="${fx.app.config.apiUrl}/\\.well-known/oauth-protected-resource"`,
          ),
        );
        const answer = JSON.parse(text);
        assert.ok(["invalid_request", "invalid_token"].includes(answer.error), text);
        assert.equal(typeof answer.error_description, "string");
        const sent = authorization?.replace(/^\S+\s*/, "") ?? "";
        if (sent.length >= 8) {
          assert.ok(!text.includes(sent), "the credential is echoed in the answer");
          for (const line of logs) assert.ok(!line.includes(sent), "the credential is logged");
        }
      }),
      fuzzRuns(1000),
    );
  } finally {
    fx.app.store.close();
  }
});
