// Walks the discovery chain an agent is about to follow — the workspace MCP's 401 challenge,
// the protected-resource metadata and the authorization-server metadata — and says whether
// each answers and agrees with the guide. Read-only: GETs, and one POST without credentials.
import * as v from "valibot";
import { ProtectedResourceSchema } from "../oauth/wire_schemas.ts";
import type { ConnectionGuide } from "./connection_guide.ts";

export const DiscoveryCheckSchema = v.object({
  ok: v.boolean(),
  checks: v.array(v.object({
    name: v.string(),
    url: v.string(),
    ok: v.boolean(),
    detail: v.string(),
  })),
});
export type DiscoveryCheck = v.InferOutput<typeof DiscoveryCheckSchema>;
type Check = DiscoveryCheck["checks"][number];

const AuthorizationServerSchema = v.looseObject({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
});

const TIMEOUT_MS = 3000;

export const DISCOVERY_STEPS = 3;

export async function checkDiscovery(
  guide: ConnectionGuide,
  fetcher: typeof fetch,
  progress: (done: number, message: string) => Promise<void>,
): Promise<DiscoveryCheck> {
  const checks: Check[] = [];
  const probe = async (
    name: string,
    url: string,
    init: RequestInit,
    judge: (response: Response) => Promise<string | true>,
  ) => {
    await progress(checks.length, `Checking ${name}`);
    let verdict: string | true;
    try {
      const response = await fetcher(url, {
        ...init,
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      verdict = await judge(response);
      if (!response.bodyUsed) await response.body?.cancel();
    } catch (error) {
      verdict = error instanceof DOMException && error.name === "TimeoutError"
        ? `no answer within ${TIMEOUT_MS} ms`
        : "unreachable from this server";
    }
    checks.push({ name, url, ok: verdict === true, detail: verdict === true ? "ok" : verdict });
  };

  await probe("workspace MCP challenge", guide.workspaceMcpUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  }, (response) => {
    const challenge = response.headers.get("WWW-Authenticate") ?? "";
    if (response.status !== 401) return Promise.resolve(`expected 401, got ${response.status}`);
    return Promise.resolve(
      challenge.includes(`resource_metadata="${guide.protectedResourceMetadataUrl}"`) ||
        `WWW-Authenticate does not name ${guide.protectedResourceMetadataUrl}`,
    );
  });
  await probe("protected-resource metadata", guide.protectedResourceMetadataUrl, {}, async (r) => {
    if (r.status !== 200) return `expected 200, got ${r.status}`;
    const parsed = v.safeParse(ProtectedResourceSchema, await _json(r));
    if (!parsed.success) return "not a protected-resource metadata document";
    if (!parsed.output.authorization_servers.includes(guide.issuer)) {
      return `authorization_servers does not list ${guide.issuer}`;
    }
    return true;
  });
  await probe(
    "authorization-server metadata",
    guide.authorizationServerMetadataUrl,
    {},
    async (r) => {
      if (r.status !== 200) return `expected 200, got ${r.status}`;
      const parsed = v.safeParse(AuthorizationServerSchema, await _json(r));
      if (!parsed.success) return "not an authorization-server metadata document";
      return parsed.output.issuer === guide.issuer || `issuer is not ${guide.issuer}`;
    },
  );
  await progress(DISCOVERY_STEPS, "Done");
  return { ok: checks.every((c) => c.ok), checks };
}

async function _json(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}
