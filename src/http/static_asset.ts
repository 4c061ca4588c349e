import { base64url } from "../secrets.ts";
import type { Handler } from "./handler.ts";

/** A response body computed once at start-up and served from memory. */
export interface StaticAsset {
  readonly contentType: string;
  readonly body: Uint8Array<ArrayBuffer>;
  readonly etag: string;
  /** Present for bodies over 1 KiB. */
  readonly gzip?: { readonly body: Uint8Array<ArrayBuffer>; readonly etag: string };
}

const GZIP_THRESHOLD = 1024;

export async function createStaticAsset(
  content: string | Uint8Array<ArrayBuffer>,
  contentType: string,
): Promise<StaticAsset> {
  const body = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  const tag = base64url(digest.subarray(0, 18));
  const etag = `"${tag}"`;
  if (body.byteLength <= GZIP_THRESHOLD) return { contentType, body, etag };
  const gzip = await _gzip(body);
  return { contentType, body, etag, gzip: { body: gzip, etag: `"${tag}-gz"` } };
}

export interface ServeOptions {
  readonly cacheControl: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Serves an asset: gzip when the client accepts it, 304 on a matching If-None-Match
 * (weak comparison, RFC 9110 §13.1.2), and HEAD without a body.
 */
export function serveStaticAsset(
  request: Request,
  asset: StaticAsset,
  options: ServeOptions,
): Response {
  const useGzip = asset.gzip !== undefined && _acceptsGzip(request.headers.get("Accept-Encoding"));
  const variant = useGzip ? asset.gzip! : asset;
  const headers: Record<string, string> = {
    ...options.headers,
    "Content-Type": asset.contentType,
    "Cache-Control": options.cacheControl,
    "ETag": variant.etag,
  };
  if (asset.gzip) headers["Vary"] = "Accept-Encoding";
  // RFC 9110 §15.4.5: a 304 repeats the validators and caching fields, not the framing.
  if (_matches(request.headers.get("If-None-Match"), asset.etag, asset.gzip?.etag)) {
    return new Response(null, { status: 304, headers });
  }
  if (useGzip) headers["Content-Encoding"] = "gzip";
  headers["Content-Length"] = String(variant.body.byteLength);
  return new Response(request.method === "HEAD" ? null : variant.body, { headers });
}

function _matches(header: string | null, etag: string, gzipEtag: string | undefined): boolean {
  if (header === null) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, "");
    return tag === etag || tag === gzipEtag;
  });
}

function _acceptsGzip(header: string | null): boolean {
  if (header === null) return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

async function _gzip(body: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([body]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * A handler for one asset whose every answer (200, HEAD, 304; identity and gzip) is built
 * once; each request gets a clone. Cloning copies a checked header list, which costs a
 * fraction of validating the same headers again on every request.
 */
export function staticAssetHandler(asset: StaticAsset, options: ServeOptions): Handler {
  const prepare = (request: Request) => serveStaticAsset(request, asset, options);
  const variants = [undefined, "gzip"].map((encoding) => {
    const headers = encoding ? { "Accept-Encoding": encoding } : {};
    const url = "http://prepared.invalid/";
    return {
      get: prepare(new Request(url, { headers })),
      head: prepare(new Request(url, { method: "HEAD", headers })),
      notModified: prepare(new Request(url, { headers: { ...headers, "If-None-Match": "*" } })),
    };
  });
  return (request) => {
    const gzip = asset.gzip !== undefined && _acceptsGzip(request.headers.get("Accept-Encoding"));
    const prepared = variants[gzip ? 1 : 0]!;
    const response = _matches(request.headers.get("If-None-Match"), asset.etag, asset.gzip?.etag)
      ? prepared.notModified
      : request.method === "HEAD"
      ? prepared.head
      : prepared.get;
    return Promise.resolve(response.clone());
  };
}

/**
 * A JSON document's handler, built again when `source()` returns another value than it
 * was built for: documents that name the upstreams' scopes, which a reload may change.
 */
export async function followingJsonHandler(
  source: () => unknown,
  document: () => unknown,
  options: ServeOptions,
  contentType = "application/json",
): Promise<Handler> {
  const build = async () => {
    const from = source();
    const asset = await createStaticAsset(JSON.stringify(document()), contentType);
    return { from, handler: staticAssetHandler(asset, options) };
  };
  let current = await build();
  return async (request, context) => {
    if (current.from !== source()) current = await build();
    return await current.handler(request, context);
  };
}
