// The recorder of the behaviour transcript (testkit/transcript.ts): sends a request and records
// its status, headers and body as one JSON line, with what changes from run to run masked.
const MASKS: [RegExp, string][] = [
  // Cookie names on plain HTTP carry the auth origin's port (src/accounts/cookies.ts).
  [/\b(vestibule_[a-z_]+?)_\d+\b/g, "$1_<port>"],
  [/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "<jwt>"],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>"],
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>"],
  [/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, "<when>"],
  [/\b1[5-9]\d{11}\b/g, "<ms>"],
  [/\b1[5-9]\d{8}\b/g, "<s>"],
  [/[A-Za-z0-9_-]{22,}/g, "<opaque>"],
  [/127\.0\.0\.1(:|%3A|%253A)\d+/g, "<host>"],
  [/\b[0-9a-z]{10}-<uuid>/g, "<id>"],
];
const mask = (s: string) => MASKS.reduce((t, [re, to]) => t.replace(re, to), s);
const SKIP_HEADERS = new Set(["date", "x-request-id", "content-length"]);

/** A response as a section reads it, unmasked. */
export interface Sent {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

export interface Recorder {
  /** The records so far, one JSON line each, in the order sent. */
  readonly records: string[];
  /** Sends a request (redirects not followed) and records its answer. */
  send(label: string, url: string, init?: RequestInit): Promise<Sent>;
  /** POSTs a JSON-RPC message (`body` as is when a string) with MCP's headers; `extra` wins. */
  mcp(label: string, url: string, body: unknown, extra?: Record<string, string>): Promise<Sent>;
}

export function createRecorder(): Recorder {
  const records: string[] = [];

  async function send(label: string, url: string, init: RequestInit = {}): Promise<Sent> {
    const response = await fetch(url, { redirect: "manual", ...init });
    const raw = new Uint8Array(await response.arrayBuffer());
    const text = response.headers.get("content-encoding") === "gzip"
      ? `<gzip ${raw.length > 0}>`
      : new TextDecoder().decode(raw);
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      if (!SKIP_HEADERS.has(k)) headers[k] = mask(v);
    });
    const isMetrics = url.endsWith("/metrics");
    records.push(JSON.stringify({
      label,
      method: init.method ?? "GET",
      url: mask(url),
      status: response.status,
      headers,
      body: isMetrics ? `<metrics ${text.length > 0}>` : mask(text),
    }));
    return { status: response.status, text, headers: response.headers };
  }

  async function mcp(
    label: string,
    url: string,
    body: unknown,
    extra: Record<string, string> = {},
  ): Promise<Sent> {
    return await send(label, url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
        ...extra,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  return { records, send, mcp };
}
