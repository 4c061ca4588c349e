/**
 * Where each per-person upstream sends people to sign in (discovery, remembered per process),
 * and which client Vestibule is there: the operator's, our client metadata document, or a
 * dynamic registration made once per upstream and kept, its secret sealed. A kept registration
 * whose secret no longer opens (the key file lost its key) is made again: the next person to
 * connect does it, and nobody is locked out.
 *
 * Our document is offered only where the server can read it. On a loopback {auth_url} it is an
 * address on this machine: a server elsewhere cannot fetch it, and one on this machine refuses it
 * unless its operator allowed loopback documents (VESTIBULE_CIMD_ALLOW_LOOPBACK, the SSRF boundary
 * of src/oauth/cimd.ts). So a loopback Vestibule registers wherever the server offers
 * registration, and offers its document only with that setting on itself (its operator says this
 * machine's instances read each other's documents) or when the server offers nothing else.
 */
import { isLoopbackHost } from "../../config/values.ts";
import type { PersonAuth, UpstreamConfig } from "../../config/upstreams.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import type { Store } from "../../store/store.ts";
import {
  type ConnectionStore,
  registrationKey,
  type RegistrationRecord,
  type StoredClient,
} from "./connection_store.ts";
import {
  type AuthorizationServer,
  discoverAuthorization,
  type DiscoveryDeps,
  fetchChallenge,
} from "./discovery.ts";
import { type OAuthClientDeps, registerClient } from "./oauth_client.ts";

export type DiscoveryResult = Awaited<ReturnType<typeof discoverAuthorization>>;

export interface UpstreamClients {
  /** The upstream's authorization server and what to ask it for (cached; a failure briefly). */
  discover(upstream: UpstreamConfig): Promise<DiscoveryResult>;
  /** The client to use with `server`: the operator's, our document, or a registration. */
  clientFor(
    upstream: UpstreamConfig,
    auth: PersonAuth,
    server: AuthorizationServer,
  ): Promise<{ ok: true; client: StoredClient } | { ok: false; problem: string }>;
}

export interface UpstreamClientsDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly log: LogSink;
  readonly records: Pick<ConnectionStore, "sealSecret" | "registrationOpens">;
  readonly authUrl: string;
  readonly redirectUri: string;
  readonly clientDocumentUrl: string;
  /** VESTIBULE_CIMD_ALLOW_LOOPBACK: the same boundary as our own metadata-document fetches. */
  readonly allowLoopback: boolean;
  readonly fetch?: typeof fetch;
  readonly resolveDns?: DiscoveryDeps["resolveDns"];
}

/** A failed discovery is answered from memory this long (the page reporting it asks again). */
const FAILURE_KEPT_MS = 30_000;
/** Discovery answers kept per process. */
const DISCOVERY_FRESH_MS = 10 * 60 * 1000;

export function createUpstreamClients(deps: UpstreamClientsDeps): UpstreamClients {
  const { store, now, log, records, redirectUri } = deps;
  const http: OAuthClientDeps = { ...(deps.fetch ? { fetch: deps.fetch } : {}), now };
  const discovered = new Map<string, { until: number; value: Promise<DiscoveryResult> }>();
  const documentReadable = deps.allowLoopback ||
    !isLoopbackHost(new URL(deps.clientDocumentUrl).hostname);

  const discover = (upstream: UpstreamConfig): Promise<DiscoveryResult> => {
    const known = discovered.get(upstream.name);
    if (known && now() < known.until) return known.value;
    const url = _url(upstream);
    const value = (async () => {
      const challenge = await fetchChallenge(url, deps.fetch ?? fetch);
      const loopback = deps.allowLoopback || isLoopbackHost(new URL(url).hostname);
      return await discoverAuthorization(url, challenge, {
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
        ...(deps.resolveDns ? { resolveDns: deps.resolveDns } : {}),
        allowLoopback: loopback,
      });
    })();
    discovered.set(upstream.name, { until: now() + DISCOVERY_FRESH_MS, value });
    // A failure is kept briefly, then the next person tries again.
    void value.then((result) => {
      const still = discovered.get(upstream.name)?.value === value;
      if (!result.ok && still) {
        discovered.set(upstream.name, { until: now() + FAILURE_KEPT_MS, value });
      }
    });
    return value;
  };

  const clientFor: UpstreamClients["clientFor"] = async (upstream, auth, server) => {
    if (auth.client !== null) {
      return {
        ok: true,
        client: {
          clientId: auth.client.id,
          authMethod: auth.client.secret === null
            ? "none"
            : server.tokenEndpointAuthMethods.includes("client_secret_post") &&
                !server.tokenEndpointAuthMethods.includes("client_secret_basic")
            ? "client_secret_post"
            : "client_secret_basic",
          source: "operator",
        },
      };
    }
    if (
      server.clientIdMetadataDocumentSupported &&
      (documentReadable || server.registrationEndpoint === null)
    ) {
      return {
        ok: true,
        client: { clientId: deps.clientDocumentUrl, authMethod: "none", source: "document" },
      };
    }
    const known = await store.get<RegistrationRecord>(registrationKey(upstream.name));
    if (known && known.value.issuer === server.issuer && known.value.redirectUri === redirectUri) {
      if (await records.registrationOpens(upstream.name, known.value)) {
        const { clientId, authMethod } = known.value;
        return { ok: true, client: { clientId, authMethod, source: "registered" } };
      }
      logEvent(log, {
        level: "warn",
        message: "the registration at an upstream's authorization server no longer opens " +
          "(its key left VESTIBULE_UPSTREAM_KEY_FILE); registering again",
        upstream: upstream.name,
        issuer: server.issuer,
      });
    }
    if (server.registrationEndpoint === null) {
      return {
        ok: false,
        problem: `${upstream.title}'s authorization server accepts neither client metadata ` +
          "documents nor registration: the operator must register Vestibule there and put " +
          "its client id in the upstreams file (oauth.clientId)",
      };
    }
    const registered = await registerClient(server, {
      redirectUri,
      clientName: `Vestibule (${new URL(deps.authUrl).host})`,
      clientUri: deps.authUrl,
      ...(auth.scopes ? { scope: auth.scopes.join(" ") } : {}),
    }, http);
    if (!registered.ok) return registered;
    const { clientId, clientSecret, authMethod } = registered.client;
    const record: RegistrationRecord = {
      issuer: server.issuer,
      redirectUri,
      clientId,
      authMethod,
      secret: clientSecret === null ? null : await records.sealSecret(upstream.name, clientSecret),
    };
    // Two processes registering at once: the first registration stored is the one used.
    const stored = await store.commit(
      [{ key: registrationKey(upstream.name), version: known?.version ?? null }],
      [{ type: "set", key: registrationKey(upstream.name), value: record }],
    );
    if (!stored) return await clientFor(upstream, auth, server);
    logEvent(log, {
      level: "info",
      message: "registered with an upstream's authorization server",
      upstream: upstream.name,
      issuer: server.issuer,
    });
    return { ok: true, client: { clientId, authMethod, source: "registered" } };
  };

  return { discover, clientFor };
}

function _url(upstream: UpstreamConfig): string {
  if (upstream.transport.kind !== "http") {
    throw new Error("a person's sign-in needs an HTTP upstream");
  }
  return upstream.transport.url;
}
