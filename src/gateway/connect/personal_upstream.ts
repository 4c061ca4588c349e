/**
 * An upstream each person signs in to as themselves, as the gateway sees it (a LiveUpstream):
 * every call goes with the caller's own token (connections.ts), over an MCP session of that
 * connection in this process; a caller who has not connected gets a tool error with the link to
 * connect, never the upstream's 401.
 *
 * Its tools are known once someone has connected: each connection's first session lists them,
 * and the listing is stored (personal_listing.ts), so every replica serves the same tools,
 * pinned per business like any upstream's.
 *
 * At start it says where its people sign in, or why they cannot (unreachable, no OAuth): that
 * is all there is to learn of it before someone connects.
 */
import { BoundedMap } from "../../bounded_map.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamFetch } from "../http_session.ts";
import { type McpClient, UpstreamError } from "../mcp_client.ts";
import type {
  Caller,
  CallRecord,
  GatewayMetrics,
  LiveUpstream,
  UpstreamState,
} from "../upstream_set.ts";
import type { Connections } from "./connections.ts";
import type { TokenLookup } from "./reconnects.ts";
import type { ConnectLinks } from "./connect_links.ts";
import type { Discovery } from "./discovery.ts";
import { PersonalListing } from "./personal_listing.ts";

export interface PersonalUpstreamDeps {
  readonly store: Store;
  readonly log: LogSink;
  readonly now: () => number;
  readonly connections: Connections;
  /** A client of `upstream` whose every request goes through `fetch` (which adds the token). */
  readonly connect: (upstream: UpstreamConfig, fetch: UpstreamFetch) => McpClient;
  readonly fetch: UpstreamFetch;
  readonly metrics?: GatewayMetrics | undefined;
  /** Binds the link a URL elicitation carries to the person (connect_links.ts). */
  readonly links: ConnectLinks;
  /** Where the people of the upstream at `url` sign in, found from nothing (discoverUpstream). */
  readonly discover: (url: string) => Promise<Discovery>;
}

/** Connections with a live session in this process at once. */
const SESSIONS = 1_000;

/** A session of one connection, and the token its requests carry now. */
interface Session {
  readonly client: McpClient;
  token: string;
}

export function createPersonalUpstream(
  config: UpstreamConfig,
  deps: PersonalUpstreamDeps,
): LiveUpstream & { close(): Promise<void>; listWith(caller: Caller): Promise<void> } {
  const { now, connections } = deps;
  const listing = new PersonalListing(config, deps.store, deps.log, now);
  const sessions = new BoundedMap<string, Session>(SESSIONS);
  const checked = _checkSignIn(config, deps);

  const sessionOf = (caller: Caller, token: string): Session => {
    const id = `${caller.businessId}\n${caller.accountId}`;
    let session = sessions.get(id);
    if (session === undefined) {
      const created: Session = {
        token,
        // This person's connections only: no other caller's answer can ever arrive on them.
        client: deps.connect(config, (url, init) =>
          deps.fetch(url, {
            ...init,
            headers: { ...init.headers, authorization: `Bearer ${created.token}` },
            pool: id,
          })),
      };
      // Each new session and each list_changed: list with this person's token, for everyone.
      created.client.onToolsChanged(() => void listing.listWith(caller, created.client));
      sessions.set(id, created);
      session = created;
    }
    session.token = token;
    return session;
  };

  const ended = (started: number, record: Omit<CallRecord, "durationMs">) =>
    _ended(config, deps, started, record);
  const refused = (lookup: Exclude<TokenLookup, { ok: true }>, caller: Caller) =>
    _refused(config, deps, lookup, caller);

  return {
    config,
    get state(): UpstreamState {
      return listing.tools === null ? "starting" : listing.held === null ? "ready" : "held";
    },
    get tools() {
      return listing.tools;
    },
    get problem() {
      return listing.held;
    },
    // Each person's own sign-in answers or not: the upstream as a whole is never down.
    downSince: null,
    get generation() {
      return listing.generation;
    },
    settled: () => listing.settled(),
    refresh: () => listing.read(),
    async listWith(caller) {
      const lookup = await connections.accessToken(config, caller);
      if (lookup.ok) await listing.listWith(caller, sessionOf(caller, lookup.token).client);
    },
    async call(tool, args, options) {
      const started = now();
      const caller = options.caller;
      if (caller === undefined) {
        // An approved gated call of someone who left: no one's token to use.
        return ended(started, {
          result: {
            content: [{ type: "text", text: `${config.title} needs a person's own sign-in` }],
            isError: true,
          },
          outcome: "not_connected",
        });
      }
      let lookup = await connections.accessToken(config, caller);
      if (!lookup.ok) return ended(started, await refused(lookup, caller));
      const session = sessionOf(caller, lookup.token);
      // One renewal when the upstream refuses the token; a second refusal ends the connection
      // (needs reconnect): never a loop on 401.
      for (let attempt = 0;; attempt++) {
        try {
          const result = await session.client.callTool(tool, args, options);
          return ended(started, { result, outcome: result.isError === true ? "tool_error" : "ok" });
        } catch (error) {
          if (!(error instanceof UpstreamError)) throw error;
          if (error.kind === "insufficient_scope") {
            const text = await connections.moreScopes(config, caller, error.requiredScopes);
            return ended(started, {
              result: { content: [{ type: "text", text }], isError: true },
              outcome: "insufficient_scope",
            });
          }
          if (error.kind !== "unauthorized") {
            return ended(started, {
              result: { content: [{ type: "text", text: error.message }], isError: true },
              outcome: error.kind,
            });
          }
          lookup = attempt === 0
            ? await connections.rejected(config, caller, lookup.token)
            : await connections.refused(config, caller, "it refused a freshly renewed token");
          if (!lookup.ok) return ended(started, await refused(lookup, caller));
          session.token = lookup.token;
        }
      }
    },
    async close() {
      // Sessions end with the process; each DELETE would be a request per connection.
      await Promise.all([...sessions.values()].map((s) => s.client.close().catch(() => {})));
      await checked;
    },
  };
}

/** A call's record with its duration, counted in the metrics. */
function _ended(
  config: UpstreamConfig,
  deps: PersonalUpstreamDeps,
  started: number,
  record: Omit<CallRecord, "durationMs">,
): CallRecord {
  const durationMs = deps.now() - started;
  deps.metrics?.call(config.name, record.outcome, durationMs / 1000);
  return { ...record, durationMs };
}

/** A call without a token to send: the tool error, with the link to connect where it helps. */
async function _refused(
  config: UpstreamConfig,
  deps: PersonalUpstreamDeps,
  lookup: Exclude<TokenLookup, { ok: true }>,
  caller: Caller,
): Promise<Omit<CallRecord, "durationMs">> {
  const result = { content: [{ type: "text", text: lookup.message }], isError: true };
  if (lookup.reason === "unavailable") return { result, outcome: "unreachable" };
  const link = deps.connections.connectUrl(config.name, caller.businessId);
  return {
    result,
    outcome: "not_connected",
    connect: {
      url: await deps.links.bound(link, config.name, caller),
      prompt: lookup.reason === "not_connected"
        ? `Connect your ${config.title} account so that your agent can use ${config.title} as you.`
        : `Reconnect your ${config.title} account: its sign-in could no longer be renewed.`,
    },
  };
}

/** One line saying where the upstream's people sign in, or why they cannot now. */
async function _checkSignIn(config: UpstreamConfig, deps: PersonalUpstreamDeps): Promise<void> {
  if (config.transport.kind !== "http") return;
  const found = await deps.discover(config.transport.url).catch((error: Error) => ({
    ok: false as const,
    problem: error.message,
  }));
  if (found.ok) {
    logEvent(deps.log, {
      level: "info",
      message: "each person signs in to the upstream at its authorization server",
      upstream: config.name,
      issuer: found.value.server.issuer,
    });
  } else {
    logEvent(deps.log, {
      level: "warn",
      message: "upstream's sign-in cannot be found: no one can connect to it until it can",
      upstream: config.name,
      problem: found.problem,
    });
  }
}
