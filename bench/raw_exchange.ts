/**
 * One HTTP/1.1 exchange on a connection of its own, read to its end as bytes, for the as-run
 * section's check that Vestibule and the bare servers send the same bytes (status line, header
 * lines in order, body), the values of `date` and `x-request-id` aside.
 */

/** Header values that differ on every answer by design. */
const VARYING = new Set(["date", "x-request-id"]);

export interface Exchange {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface Answer {
  readonly status: string;
  /** Header lines in the order sent, names lower-cased. */
  readonly headers: [string, string][];
  readonly body: Uint8Array;
}

/** One request on its own connection, read to the end: the answer's very bytes. */
export async function rawExchange(exchange: Exchange): Promise<Answer> {
  const body = exchange.body === undefined ? "" : exchange.body;
  const head = [
    `${exchange.method} ${exchange.url.pathname} HTTP/1.1`,
    `Host: ${exchange.url.host}`,
    ...Object.entries(exchange.headers).map(([name, value]) => `${name}: ${value}`),
    ...(exchange.body === undefined
      ? []
      : [`Content-Length: ${new TextEncoder().encode(body).length}`]),
    "Connection: close",
  ];
  const conn = await Deno.connect({
    hostname: exchange.url.hostname,
    port: Number(exchange.url.port),
  });
  await conn.write(new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n${body}`));
  const bytes = new Uint8Array(await new Response(conn.readable).arrayBuffer());
  let end = 0;
  while (
    !(bytes[end] === 13 && bytes[end + 1] === 10 && bytes[end + 2] === 13 && bytes[end + 3] === 10)
  ) {
    if (++end + 3 >= bytes.length) throw new Error(`no end of headers from ${exchange.url}`);
  }
  const [status, ...lines] = new TextDecoder().decode(bytes.subarray(0, end)).split("\r\n");
  return {
    status: status!,
    headers: lines.map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
    body: bytes.subarray(end + 4),
  };
}

/** The body's bytes without the chunked framing (Node.js sends every answer chunked). */
export function payloadOf(answer: Answer): Uint8Array {
  const chunked = answer.headers.some(([name, value]) =>
    name === "transfer-encoding" && value === "chunked"
  );
  if (!chunked) return answer.body;
  const parts: Uint8Array[] = [];
  const text = new TextDecoder("latin1");
  for (let at = 0;;) {
    const lineEnd = answer.body.indexOf(13, at);
    const size = parseInt(text.decode(answer.body.subarray(at, lineEnd)), 16);
    if (!(size > 0)) break;
    parts.push(answer.body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  const payload = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((offset, part) => (payload.set(part, offset), offset + part.length), 0);
  return payload;
}

/** The comparison is only fair when both servers send the same bytes. */
export function expectSameBytes(label: string, vestibule: Answer, bare: Answer): void {
  const shown = (answer: Answer) =>
    [
      answer.status,
      ...answer.headers.map(([name, value]) => `${name}: ${VARYING.has(name) ? "…" : value}`),
    ].join("\n");
  const [a, b] = [shown(vestibule), shown(bare)];
  if (a !== b) throw new Error(`${label}: the bare server's head differs:\n${a}\n---\n${b}`);
  const same = vestibule.body.length === bare.body.length &&
    vestibule.body.every((byte, i) => byte === bare.body[i]);
  if (!same) {
    const start = (answer: Answer) =>
      JSON.stringify(new TextDecoder("latin1").decode(answer.body.subarray(0, 120)));
    throw new Error(
      `${label}: the bare server's body differs:\n${start(vestibule)}\n---\n${start(bare)}`,
    );
  }
}
