// How the Streamable HTTP transport reads an upstream's answer to one POST: a JSON body whole, or
// an event stream as it arrives (progress is delivered before the answer), each counted against
// the upstream's cap; and whether the answer answers this call.
import { readCapped } from "../http/body.ts";
import { createSseParser } from "../mcp/sse.ts";
import { deadlines } from "../deadlines.ts";
import { parseBearerChallenge, scopeTokens } from "./connect/discovery.ts";
import type { HttpSession } from "./http_session.ts";
import { UpstreamError } from "./mcp_client.ts";
import {
  type Incoming,
  readIncoming,
  type RpcCall,
  type RpcOutcome,
  tooLarge,
} from "./rpc_channel.ts";

/** Requests an upstream may send on one call's event stream; each costs the upstream a POST. */
const MAX_REQUESTS_PER_CALL = 16;

/** How long the rest of an event stream is read after its answer, to keep its connection. */
const DRAIN_MS = 100;

/** A whole JSON body's text; one decoder for every call (it keeps no state between them). */
const utf8 = new TextDecoder();
/** An event stream's decoding options, one object for every chunk. */
const STREAMING: TextDecodeOptions = { stream: true };

/** A JSON body, whole and within the cap. */
export async function readJson(
  session: HttpSession,
  response: Response,
  call: RpcCall,
): Promise<Incoming> {
  const body = await readCapped(response, session.upstream.maxResponseBytes);
  if (!body.ok) {
    if (body.problem === "too-large") throw tooLarge(session.upstream);
    if (call.signal.aborted) throw call.signal.reason;
    session.forget();
    throw new UpstreamError(
      "unreachable",
      `${session.upstream.title} is unreachable: its answer broke off`,
    );
  }
  return readIncoming(utf8.decode(body.bytes));
}

/**
 * An event stream read chunk by chunk as it arrives (progress reaches the agent before the
 * answer), straight from the body's reader into a synchronous parser: no stream transforms.
 */
export async function readStream(
  session: HttpSession,
  response: Response,
  call: RpcCall,
): Promise<RpcOutcome> {
  const { title, maxResponseBytes } = session.upstream;
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const parse = createSseParser();
  let bytes = 0;
  let asked = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        throw new UpstreamError(
          "protocol",
          `${title} ended its event stream without answering ${call.method}`,
        );
      }
      bytes += value.byteLength;
      if (bytes > maxResponseBytes) throw tooLarge(session.upstream);
      for (const data of parse(decoder.decode(value, STREAMING))) {
        // An event without data primes a resumable stream (server-everything sends one first).
        if (data === "") continue;
        const message = readIncoming(data);
        switch (message.kind) {
          case "response": {
            const outcome = answerTo(title, message, call, false);
            void _drain(reader, maxResponseBytes - bytes);
            return outcome;
          }
          case "notification":
            call.onNotification(message.method, message.params);
            break;
          case "request":
            // MCP 2025-11-25 lets a server ask the client things on this stream (sampling,
            // elicitation, roots); the gateway has no one to ask. Each refusal is one POST, so
            // a call gets a few, one at a time, and then ends.
            if (++asked > MAX_REQUESTS_PER_CALL) {
              throw new UpstreamError(
                "protocol",
                `${title} sent more than ${MAX_REQUESTS_PER_CALL} requests to the client ` +
                  `during ${call.method}; the gateway serves none, and ended the call`,
              );
            }
            await session.refuse(message.id, message.method, call);
            break;
          case "invalid":
            throw new UpstreamError("protocol", `${title} sent ${message.problem}`);
        }
      }
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    if (error instanceof UpstreamError) throw error;
    if (call.signal.aborted) throw call.signal.reason;
    session.forget();
    throw new UpstreamError("unreachable", `${title} is unreachable: its answer broke off`);
  }
}

/**
 * A 403 whose Bearer challenge says `insufficient_scope` (RFC 6750 §3.1, MCP "Scope Challenge
 * Handling"): the token lacks a permission, whatever the body says. Other 403s read on.
 */
export async function refusedScope(title: string, response: Response, method: string) {
  const bearer = parseBearerChallenge(response.headers.get("WWW-Authenticate"));
  if (bearer?.error !== "insufficient_scope") return;
  await response.body?.cancel();
  const scopes = scopeTokens(bearer.scope);
  const which = scopes.length === 0 ? "" : ` (${scopes.join(" ")})`;
  throw new UpstreamError(
    "insufficient_scope",
    `${title} refused ${method}: its sign-in lacks a permission the call needs${which} (HTTP 403 insufficient_scope)`,
    null,
    scopes,
  );
}

/** `refusedPost`: the answer came with an HTTP error status, which refuses this POST itself. */
export function answerTo(
  title: string,
  message: Incoming,
  call: RpcCall,
  refusedPost: boolean,
): RpcOutcome {
  if (message.kind === "invalid") {
    throw new UpstreamError("protocol", `${title} answered ${call.method} with ${message.problem}`);
  }
  if (message.kind !== "response") {
    throw new UpstreamError(
      "protocol",
      `${title} answered ${call.method} with a ${message.kind} instead of a response`,
    );
  }
  // An error about a request whose id the server could not read carries a null id, with an
  // HTTP error status (Streamable HTTP "Sending Messages to the Server"); anywhere else a null
  // id could be another request's answer, and another caller's data.
  if (
    message.id !== call.id && !(message.id === null && refusedPost && "error" in message.outcome)
  ) {
    throw new UpstreamError(
      "protocol",
      message.id === null
        ? `${title} answered ${call.method} with an error that names no request`
        : `${title} answered ${call.method} with the id of another request`,
    );
  }
  return message.outcome;
}

/**
 * After the answer, the rest of its event stream (its end, as a rule, already on the way) is read
 * and dropped without holding up the answer, so that the keep-alive client may give the
 * connection to another call once its framing ended cleanly; a stream still open after
 * DRAIN_MS (one of the shared deadlines: no timer a call), or longer than the cap, is cancelled and
 * its connection closed.
 */
async function _drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  bytesLeft: number,
): Promise<void> {
  const cut = () => void reader.cancel().catch(() => {});
  const deadline = deadlines.after(DRAIN_MS, cut);
  try {
    for (let left = bytesLeft;;) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
      if (left < 0) return cut();
    }
  } catch {
    // Cut, or broken off: its connection is closed either way.
  } finally {
    deadline.clear();
  }
}
