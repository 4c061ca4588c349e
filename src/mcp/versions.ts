// MCP protocol versions this server speaks, newest first (MCP 2025-11-25 "Lifecycle").
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18"] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedVersion(version: string): version is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** The client's version when we speak it; otherwise our newest, and the client decides. */
export function negotiateVersion(requested: string): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export const SUPPORTED_VERSIONS_TEXT = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
