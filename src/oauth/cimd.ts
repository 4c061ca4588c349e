/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client_id
 * that is an https URL names a JSON document describing the client. Fetching a URL chosen
 * by a stranger is an SSRF risk, so: the host must resolve only to public addresses
 * (loopback allowed by VESTIBULE_CIMD_ALLOW_LOOPBACK), redirects are not followed, the body
 * is capped at 5 KiB and the fetch at 5 s, each origin has a fetch budget, and answers are
 * cached per their Cache-Control. Residual risk, accepted: DNS may change between our
 * resolution and fetch's own (rebinding within the record's TTL).
 */
import { BoundedMap } from "../bounded_map.ts";
import type { Config } from "../config/config.ts";
import { isLoopbackHost } from "../config/values.ts";
import { readCapped } from "../http/body.ts";
import type { RateLimiter } from "../http/rate_limiter.ts";
import { refuseHost, type ResolveDns } from "./addresses.ts";
import { type ClientMetadata, parseClientMetadata } from "./client_metadata.ts";
import type { ScopeCatalogue } from "./scopes.ts";
import { runtime } from "../runtime/current.ts";

export type DocumentLookup = { ok: true; metadata: ClientMetadata } | {
  ok: false;
  description: string;
};

export interface MetadataDocuments {
  resolve(clientId: string): Promise<DocumentLookup>;
}

export interface MetadataDocumentDeps {
  readonly config: Pick<Config, "cimdAllowLoopback">;
  readonly now: () => number;
  /** Fetches per origin (`cimd`); cache hits are free. */
  readonly budget: RateLimiter;
  /** The scopes a document's `scope` may name. */
  readonly scopes: ScopeCatalogue;
  readonly fetch?: typeof fetch;
  readonly resolveDns?: ResolveDns;
}

export const MAX_DOCUMENT_BYTES = 5 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const DEFAULT_CACHE_MS = 5 * 60 * 1000;
const MAX_CACHE_MS = 24 * 60 * 60 * 1000;
const MAX_CACHED = 1_000;

export function createMetadataDocuments(deps: MetadataDocumentDeps): MetadataDocuments {
  const { config, now } = deps;
  const doFetch = deps.fetch ?? fetch;
  const resolveDns: ResolveDns = deps.resolveDns ??
    runtime.resolveDns;
  const cache = new BoundedMap<string, { result: DocumentLookup; until: number }>(MAX_CACHED);
  const { budget } = deps;

  const remember = (clientId: string, result: DocumentLookup, ms: number) => {
    if (ms > 0) cache.set(clientId, { result, until: now() + ms });
  };

  return {
    async resolve(clientId) {
      const hit = cache.get(clientId);
      if (hit && hit.until > now()) return hit.result;
      cache.delete(clientId);

      const problem = _clientIdProblem(clientId);
      if (problem) return { ok: false, description: `client_id ${problem}` };
      const url = new URL(clientId);
      if (!config.cimdAllowLoopback && isLoopbackHost(url.hostname)) {
        return { ok: false, description: _loopbackDocument(clientId) };
      }
      if (!budget.take(url.origin).allowed) {
        return { ok: false, description: `Too many metadata document fetches from ${url.origin}` };
      }
      // One time budget for the lookup, the fetch and the body: a slow resolver is no way
      // around it.
      const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
      const refusal = await refuseHost(
        url.hostname,
        config.cimdAllowLoopback,
        (host, type) => resolveDns(host, type, signal),
      );
      if (refusal) {
        const { host, kind } = refusal;
        return {
          ok: false,
          description: kind === "loopback"
            ? _loopbackDocument(clientId)
            : kind === "unresolved"
            ? `The client_id host ${host} does not resolve`
            : `The client_id host ${host} resolves to a ${kind} address, which is not fetched`,
        };
      }

      let response: Response;
      try {
        response = await doFetch(clientId, {
          redirect: "manual",
          signal,
          headers: { Accept: "application/json" },
        });
      } catch {
        return { ok: false, description: "The client metadata document could not be fetched" };
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        const what = response.status >= 300 && response.status < 400
          ? "redirects, which are not followed"
          : `answered ${response.status}`;
        return { ok: false, description: `The client metadata document ${what}` };
      }
      // Read under the same signal as the fetch: a body that trickles, resets or breaks its
      // framing ends within the time budget as "could not be fetched".
      const body = await readCapped(response, MAX_DOCUMENT_BYTES);
      if (!body.ok) {
        return {
          ok: false,
          description: body.problem === "too-large"
            ? `The client metadata document exceeds ${MAX_DOCUMENT_BYTES} bytes`
            : "The client metadata document could not be fetched",
        };
      }
      let json: unknown;
      try {
        json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
      } catch {
        return { ok: false, description: "The client metadata document is not JSON" };
      }
      const result = _validate(clientId, json, deps.scopes);
      remember(clientId, result, _cacheLifetime(response.headers.get("Cache-Control")));
      return result;
    },
  };
}

function _validate(clientId: string, json: unknown, scopes: ScopeCatalogue): DocumentLookup {
  const doc = (typeof json === "object" && json !== null ? json : {}) as Record<string, unknown>;
  if (doc.client_id !== clientId) {
    return { ok: false, description: "The document's client_id must equal its URL exactly" };
  }
  if (typeof doc.client_name !== "string") {
    return { ok: false, description: "The document must carry client_name" };
  }
  if (!Array.isArray(doc.redirect_uris)) {
    return { ok: false, description: "The document must carry redirect_uris" };
  }
  if ("client_secret" in doc || "client_secret_expires_at" in doc) {
    return { ok: false, description: "A metadata document must not carry a client secret" };
  }
  const parsed = parseClientMetadata(json, scopes);
  if (!parsed.ok) return { ok: false, description: parsed.description };
  if (parsed.metadata.tokenEndpointAuthMethod !== "none") {
    return {
      ok: false,
      description: 'A metadata-document client must use token_endpoint_auth_method "none"',
    };
  }
  return parsed;
}

function _clientIdProblem(clientId: string): string | null {
  if (clientId.length > 2000) return "is too long";
  if (!URL.canParse(clientId) || /[\s#]/.test(clientId)) return "is not a valid URL";
  const url = new URL(clientId);
  // Loopback http without the setting is refused after these checks, in words of its own.
  const loopbackHttp = url.protocol === "http:" && isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !loopbackHttp) return "must be an https URL";
  if (url.username !== "" || url.password !== "") return "must not contain userinfo";
  if (url.pathname === "/" || url.pathname === "") return "must have a path";
  if (/\/\.\.?(\/|$)/.test(url.pathname) || /\/\.\.?(\/|$)/i.test(clientId.replace(/%2e/gi, "."))) {
    return "must not contain dot segments";
  }
  return null;
}

/**
 * A document on the application's own machine: why it is not read, and the ways on, for the
 * person who meets it and whoever runs this server (two instances on one machine, docs/gateway.md).
 */
function _loopbackDocument(clientId: string): string {
  return `The application names itself by a client metadata document on its own computer ` +
    `(${clientId}, a loopback address), which this server does not read: such documents must ` +
    `be at a public https address. An application on the same machine can register with this ` +
    `server instead (a Vestibule on a loopback address does); to try two servers on one ` +
    `machine, whoever runs this one can allow loopback documents with ` +
    `VESTIBULE_CIMD_ALLOW_LOOPBACK=on.`;
}

/** Honours no-store / no-cache / max-age, within [0, 24 h]; five minutes when silent. */
function _cacheLifetime(header: string | null): number {
  if (header === null) return DEFAULT_CACHE_MS;
  const directives = header.toLowerCase().split(",").map((d) => d.trim());
  if (directives.includes("no-store") || directives.includes("no-cache")) return 0;
  const maxAge = directives.find((d) => d.startsWith("max-age="));
  if (maxAge === undefined) return DEFAULT_CACHE_MS;
  const seconds = Number(maxAge.slice("max-age=".length));
  return Number.isFinite(seconds)
    ? Math.min(MAX_CACHE_MS, Math.max(0, seconds * 1000))
    : DEFAULT_CACHE_MS;
}
