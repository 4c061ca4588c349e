/**
 * The upstream MCP servers the operator declares in VESTIBULE_UPSTREAMS (a JSON file read at
 * start-up and on SIGHUP): what the rest of the gateway is told about each, already checked and
 * with the secrets of its header files read.
 */

export interface UpstreamsConfig {
  /** File order, which is listing order. */
  readonly upstreams: readonly UpstreamConfig[];
}

export type UpstreamTransport =
  | {
    readonly kind: "http";
    /** A Streamable HTTP endpoint, trusted as the operator wrote it (loopback is normal). */
    readonly url: string;
    /** Sent with every request; values read from owner-only files are secrets. */
    readonly headers: Readonly<Record<string, string>>;
  }
  | {
    readonly kind: "stdio";
    readonly command: string;
    readonly args: readonly string[];
    /** The child's whole environment: nothing of Vestibule's own is passed on. */
    readonly env: Readonly<Record<string, string>>;
    readonly cwd: string | null;
  };

export interface UpstreamConfig {
  /** Letters, digits and `-`; the prefix of its tools' names (`name__tool`). */
  readonly name: string;
  /** Shown to people (consent page, approval page, /account); the name by default. */
  readonly title: string;
  readonly transport: UpstreamTransport;
  /** Upstream tool names (without the prefix) that need an owner's approval per call. */
  readonly gated: ReadonlySet<string>;
  /** Upstream tool names never listed nor callable. */
  readonly hidden: ReadonlySet<string>;
  /** Upstream tool name to the scope it needs instead of `upstream.<name>`. */
  readonly toolScopes: ReadonlyMap<string, string>;
  /** Whether its `upstream.…` scopes are owner-only (a member can never be granted them). */
  readonly ownerOnly: boolean;
  /** Business ids it serves; null: every business. */
  readonly businesses: readonly string[] | null;
  /** A call's whole time, from sending to the last byte of the answer. */
  readonly timeoutMs: number;
  /** Largest answer read from it; a larger one is a tool error. */
  readonly maxResponseBytes: number;
  /** Whether each call tells it who is asking (`_meta`, non-secret ids only). */
  readonly forwardIdentity: boolean;
  /** Calls per minute and burst, per account and client. */
  readonly rateLimit: { readonly perMinute: number; readonly burst: number };
  /**
   * Set when each person signs in to it as themselves (`"auth": "person"`, or an upstream that
   * answered 401 with a protected-resource challenge): Vestibule is its OAuth client and sends
   * each caller's own token. Null: the upstream gets the file's headers only.
   */
  readonly auth: PersonAuth | null;
  /**
   * Set only when the operator lists it in the AI Catalog (`"catalog"` in its entry): the
   * public words it is shown with there, as part of the workspace. Absent: it stays private.
   */
  readonly catalog?: CatalogListing;
}

/** An upstream's AI Catalog entry, in the operator's words; never its URL or its name. */
export interface CatalogListing {
  /** Letters, digits and `-`: the last part of its `urn:air:…:mcp:…` identifier. */
  readonly id: string;
  readonly title: string;
  readonly description: string;
}

export interface PersonAuth {
  /** A client the operator registered with the upstream's authorization server; null: CIMD or DCR. */
  readonly client: { readonly id: string; readonly secret: string | null } | null;
  /** The scopes to ask for instead of those the upstream names; null: the upstream's. */
  readonly scopes: readonly string[] | null;
}

/** The longest name an upstream tool may have in the workspace, prefix included. */
export const MAX_SERVED_TOOL_NAME = 64;

/** An upstream tool's name in the workspace: `<upstream>__<tool>` (upstream names have no `_`). */
export function servedToolName(upstream: string, tool: string): string {
  return `${upstream}__${tool}`;
}
