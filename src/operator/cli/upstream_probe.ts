// One look at each upstream of VESTIBULE_UPSTREAMS through the gateway's own client, for the
// operator (`admin upstreams`, `admin check --live`): whether it answers, the revision agreed,
// and what it lists with each definition's hash (what a business's pin is compared with).
import { canonicalSha256 } from "../../canonical_json.ts";
import { createMcpClient } from "../../gateway/client.ts";
import type { McpClient } from "../../gateway/mcp_client.ts";
import { discoverUpstream } from "../../gateway/connect/discovery.ts";
import type { LiveTool } from "../../gateway/upstream_set.ts";
import type { UpstreamConfig, UpstreamsConfig } from "../../config/upstreams.ts";

export type Probe =
  & { readonly upstream: UpstreamConfig }
  & (
    | {
      readonly reached: true;
      readonly protocolVersion: string | null;
      /** Every tool it lists, hidden ones too, in its order. */
      readonly tools: readonly LiveTool[];
    }
    | {
      /** An upstream each person signs in to: its authorization server was found and checked. */
      readonly reached: true;
      readonly signIn: { readonly issuer: string };
    }
    | { readonly reached: false; readonly problem: string }
  );

export interface ProbeDeps {
  /** The client of one upstream; the gateway's, with its log dropped, by default. */
  readonly connect?: (upstream: UpstreamConfig) => McpClient;
}

/** All at once, each within its own timeoutSeconds; every session or child is ended after. */
export function probeUpstreams(
  config: UpstreamsConfig,
  deps: ProbeDeps = {},
): Promise<Probe[]> {
  // The command's own output says what went wrong; a child's stderr is not the operator's.
  const connect = deps.connect ?? ((upstream) => createMcpClient(upstream, { log: () => {} }));
  return Promise.all(config.upstreams.map(async (upstream): Promise<Probe> => {
    // Listing needs a person's token: what can be checked is where they would sign in.
    if (upstream.auth !== null && upstream.transport.kind === "http") {
      const { url } = upstream.transport;
      const found = await discoverUpstream(url, { allowLoopback: false });
      return found.ok
        ? { upstream, reached: true, signIn: { issuer: found.value.server.issuer } }
        : { upstream, reached: false, problem: found.problem };
    }
    const client = connect(upstream);
    try {
      const listed = await client.listTools();
      return {
        upstream,
        reached: true,
        protocolVersion: client.version,
        tools: listed.map((definition) => ({ definition, hash: canonicalSha256(definition) })),
      };
    } catch (error) {
      // The client's errors are plain words naming the upstream, never a header or secret.
      return { upstream, reached: false, problem: (error as Error).message };
    } finally {
      await client.close().catch(() => {});
    }
  }));
}

/** Where it is, without a header's or an environment variable's value (or a URL's password). */
export function describeTransport(upstream: UpstreamConfig): string {
  const transport = upstream.transport;
  if (transport.kind === "stdio") return [transport.command, ...transport.args].join(" ");
  const url = new URL(transport.url);
  if (url.password !== "") url.password = "***";
  return url.href;
}
