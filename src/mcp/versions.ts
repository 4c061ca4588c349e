// MCP protocol versions this server speaks, newest first. 2026-07-28 is the modern era (MCP
// 2026-07-28 "Versioning": no handshake, every request carries its version, capabilities and
// client info in `_meta`); the 2025 revisions are the legacy era, opened by `initialize`.
// A dual-era server serves both on one endpoint, each request in its own revision.
export const SUPPORTED_PROTOCOL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export const MODERN_PROTOCOL_VERSION = "2026-07-28";
export type LegacyVersion = Exclude<ProtocolVersion, typeof MODERN_PROTOCOL_VERSION>;

/** The versions `initialize` can negotiate, newest first (MCP 2025-11-25 "Lifecycle"). */
export const LEGACY_PROTOCOL_VERSIONS: readonly LegacyVersion[] = ["2025-11-25", "2025-06-18"];

export function isSupportedVersion(version: string): version is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** Whether requests of this version carry their own `_meta` and need no `initialize`. */
export function isModern(version: ProtocolVersion): version is typeof MODERN_PROTOCOL_VERSION {
  return version === MODERN_PROTOCOL_VERSION;
}

/** `initialize`: the client's version when we speak it; otherwise our newest, and the client decides. */
export function negotiateVersion(requested: string): LegacyVersion {
  return (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested as LegacyVersion
    : LEGACY_PROTOCOL_VERSIONS[0]!;
}

export const SUPPORTED_VERSIONS_TEXT = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
