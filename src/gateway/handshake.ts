// Which revision an upstream speaks (MCP 2026-07-28 "Versioning: Backward Compatibility"):
// server/discover first; a DiscoverResult that offers 2026-07-28 makes it modern, and every
// later request carries its own `_meta`. Anything else (an error, a 400 or 404, no answer on
// stdio within the probe's time) makes it legacy: `initialize` with 2025-11-25, then
// `notifications/initialized`.
import { META } from "../mcp/messages.ts";
import { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import { UpstreamError } from "./mcp_client.ts";
import type { RpcOutcome } from "./rpc_channel.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";

const CLIENT_INFO = Object.freeze({ name: "vestibule-gateway", version: "1.0.0" });

/** What Vestibule can do for an upstream: nothing it could ask of us (sampling, roots…). */
const CLIENT_CAPABILITIES = Object.freeze({});

/** A legacy server may stay silent on a method it does not know (stdio): wait this long. */
export const DISCOVER_PROBE_MS = 5_000;

/** Sends one request of the handshake; `probe` marks server/discover. */
export type HandshakeSend = (
  method: string,
  params: Record<string, unknown>,
  version: string | null,
  probe: boolean,
) => Promise<RpcOutcome>;

export type HandshakeNotify = (
  method: string,
  params: Record<string, unknown>,
  version: string,
) => Promise<void>;

/** The `_meta` every 2026-07-28 request carries. */
export function modernMeta(): Record<string, unknown> {
  return {
    [META.protocolVersion]: MODERN_PROTOCOL_VERSION,
    [META.clientCapabilities]: CLIENT_CAPABILITIES,
    [META.clientInfo]: CLIENT_INFO,
  };
}

/** The revision agreed with the upstream. */
export async function handshake(
  upstream: UpstreamConfig,
  send: HandshakeSend,
  notify: HandshakeNotify,
): Promise<string> {
  if (await _isModern(send)) return MODERN_PROTOCOL_VERSION;
  const outcome = await send(
    "initialize",
    {
      protocolVersion: LEGACY_PROTOCOL_VERSIONS[0],
      capabilities: CLIENT_CAPABILITIES,
      clientInfo: CLIENT_INFO,
    },
    null,
    false,
  );
  if ("error" in outcome) {
    throw new UpstreamError(
      "protocol",
      `${upstream.title} refused to start a session: ${outcome.error.message}`,
    );
  }
  const version = outcome.result["protocolVersion"];
  if (typeof version !== "string" || !LEGACY_PROTOCOL_VERSIONS.includes(version as never)) {
    throw new UpstreamError(
      "protocol",
      `${upstream.title} offered MCP version ${JSON.stringify(version)}; the gateway speaks ` +
        `${[MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS].join(", ")}`,
    );
  }
  await notify("notifications/initialized", {}, version);
  return version;
}

async function _isModern(send: HandshakeSend): Promise<boolean> {
  let outcome: RpcOutcome;
  try {
    outcome = await send("server/discover", { _meta: modernMeta() }, MODERN_PROTOCOL_VERSION, true);
  } catch (error) {
    // A legacy server answers a request before `initialize` as it likes (400, 404, an odd
    // body, silence); only an upstream that cannot be reached at all ends the handshake here.
    if (error instanceof UpstreamError && error.kind === "protocol") return false;
    if (error instanceof UpstreamError && error.kind === "timeout") return false;
    throw error;
  }
  if ("error" in outcome) return false;
  const versions = outcome.result["supportedVersions"];
  return Array.isArray(versions) && versions.includes(MODERN_PROTOCOL_VERSION);
}
