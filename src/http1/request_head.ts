// An HTTP/1.1 request head (RFC 9112 §2-§7), parsed strictly: whatever the grammar does not
// allow is refused instead of guessed at, so that no proxy in front of us can frame a request
// differently than we do (request smuggling, RFC 9112 §11.2).
import { HttpError } from "../http/errors.ts";

/** How the body is delimited (RFC 9112 §6.3). */
export type BodyFraming =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" };

export interface RequestHead {
  readonly method: string;
  /**
   * The absolute URL: absolute-form as sent, origin-form appended to Host (§3.2-§3.3). Not yet
   * parsed: the Request constructor does that, and refuses what is malformed.
   */
  readonly url: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minorVersion: number;
  /** Field lines as sent, in order. */
  readonly fields: readonly [string, string][];
  readonly framing: BodyFraming;
  /** False for HTTP/1.0 and for `Connection: close` (§9.3). */
  readonly keepAlive: boolean;
  /** `Expect: 100-continue` on HTTP/1.1 (RFC 9110 §10.1.1). */
  readonly expectContinue: boolean;
}

/** Header fields per request; beyond it the answer is 431, like a head over its byte cap. */
export const MAX_FIELDS = 100;

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const REQUEST_LINE = new RegExp(`^(${TOKEN}) ([\\x21-\\x7e]+) (HTTP/\\d\\.\\d)$`);
/** field-name ":" OWS field-value OWS; the value holds no control characters but HTAB (§5). */
const FIELD_LINE = new RegExp(`^(${TOKEN}):[ \\t]*([^\\x00-\\x08\\x0a-\\x1f\\x7f]*)$`);
/** uri-host [":" port] (RFC 9112 §3.2, RFC 3986 §3.2.2): an IP literal or a reg-name. */
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%!$&'()*+,;=-]+)(:\d{0,5})?$/;
const ABSOLUTE_FORM = /^https?:\/\//i;

/**
 * Parses the head, given as text (each byte one character) without its final empty line.
 * Throws an HttpError with the status and a message naming what is wrong.
 */
export function parseRequestHead(head: string): RequestHead {
  const lines = head.split("\r\n");
  const requestLine = REQUEST_LINE.exec(lines[0]!);
  if (!requestLine) throw _bad("malformed request line");
  const [, method, target, version] = requestLine as unknown as [string, string, string, string];
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0") {
    throw new HttpError(505, `HTTP version not supported: ${version}`);
  }
  const minorVersion = version === "HTTP/1.1" ? 1 : 0;
  if (lines.length - 1 > MAX_FIELDS) {
    throw new HttpError(431, `Request header fields too large: more than ${MAX_FIELDS} fields`);
  }
  const fields: [string, string][] = [];
  let host: string | undefined;
  let hosts = 0;
  const lengths: string[] = [];
  const codings: string[] = [];
  let close = minorVersion === 0;
  let expectContinue = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const field = FIELD_LINE.exec(line);
    if (!field) throw _bad(_describeBadField(line));
    const name = field[1]!;
    let value = field[2]!;
    if (value.endsWith(" ") || value.endsWith("\t")) value = value.replace(/[ \t]+$/, "");
    fields.push([name, value]);
    switch (name.toLowerCase()) {
      case "host":
        hosts++;
        host = value;
        break;
      case "content-length":
        lengths.push(...value.split(",").map((s) => s.trim()));
        break;
      case "transfer-encoding":
        codings.push(...value.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s));
        break;
      case "connection":
        if (value.split(",").some((s) => s.trim().toLowerCase() === "close")) close = true;
        break;
      case "expect":
        // §10.1.1: a server MUST ignore 100-continue in an HTTP/1.0 request.
        expectContinue = minorVersion === 1 && value.toLowerCase() === "100-continue";
        break;
    }
  }
  // §3.2: a server MUST respond 400 to a request without, or with more than one, Host.
  if (hosts !== 1 || host === undefined) {
    throw _bad(hosts === 0 ? "missing Host header" : "more than one Host header");
  }
  if (!HOST.test(host)) throw _bad("malformed Host header");
  let url: string;
  if (target.startsWith("/")) url = `http://${host}${target}`;
  // §3.2.2: the absolute form wins over Host.
  else if (ABSOLUTE_FORM.test(target)) url = target;
  else throw _bad("request target must be a path or an absolute http URL");
  return {
    method,
    url,
    minorVersion,
    fields,
    framing: _framing(lengths, codings, minorVersion),
    keepAlive: !close,
    expectContinue,
  };
}

/** RFC 9112 §6.1-§6.3. */
function _framing(lengths: string[], codings: string[], minorVersion: number): BodyFraming {
  if (codings.length > 0) {
    if (minorVersion === 0) throw _bad("Transfer-Encoding in an HTTP/1.0 request");
    // §6.1: a server MAY reject a request with both; it MUST close the connection either way.
    if (lengths.length > 0) throw _bad("both Transfer-Encoding and Content-Length");
    if (codings.at(-1) !== "chunked") throw _bad("Transfer-Encoding must end with chunked");
    if (codings.length > 1) {
      throw new HttpError(501, `Transfer-Encoding not supported: ${codings.join(", ")}`);
    }
    return { kind: "chunked" };
  }
  if (lengths.length === 0) return { kind: "none" };
  // RFC 9110 §8.6: a list of identical values may be taken as one; anything else is an error.
  const [first] = lengths;
  if (!lengths.every((l) => l === first) || !/^\d{1,15}$/.test(first!)) {
    throw _bad("invalid Content-Length");
  }
  const length = Number(first);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

function _describeBadField(line: string): string {
  // §5.2: obs-fold is refused; §5.1: whitespace before the colon MUST be refused.
  if (line.startsWith(" ") || line.startsWith("\t")) return "obsolete line folding";
  const colon = line.indexOf(":");
  if (colon <= 0) return "header line without a field name and colon";
  const name = line.slice(0, colon);
  if (/[ \t]$/.test(name)) return `whitespace before the colon of ${JSON.stringify(name.trim())}`;
  if (!new RegExp(`^${TOKEN}$`).test(name)) return "malformed header field name";
  return `invalid character in the value of ${name}`;
}

function _bad(message: string): HttpError {
  return new HttpError(400, `Bad request: ${message}`);
}
