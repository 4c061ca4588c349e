// A stdio child's output read as lines (MCP "stdio": newline-delimited messages): each line as
// text as it arrives; a line past the cap is not kept, only its ends, from which the id of the
// response it carried can still be told.
import { joinBytes } from "../join_bytes.ts";

/** Bytes kept of each end of an overlong line, to find its id. */
const ID_WINDOW = 256;

export interface LineHandlers {
  readonly line: (text: string) => void;
  readonly overlong: (head: string, tail: string) => void;
}

/**
 * Each newline-ended line of a stream as text, as it arrives. A line longer than `maxBytes` is
 * not kept: only its first and last bytes are, and `overlong` gets them when it ends.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  on: LineHandlers,
): Promise<void> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let head: Uint8Array | null = null;
  let tail: Uint8Array = new Uint8Array(0);
  const add = (bytes: Uint8Array) => {
    if (head !== null) {
      tail = _lastBytes(tail, bytes, ID_WINDOW);
      return;
    }
    size += bytes.byteLength;
    if (size <= maxBytes) {
      parts.push(bytes);
      return;
    }
    const kept = joinBytes([...parts, bytes]);
    head = kept.subarray(0, ID_WINDOW);
    tail = kept.slice(Math.max(ID_WINDOW, kept.byteLength - ID_WINDOW));
    parts = [];
  };
  const end = () => {
    if (head !== null) on.overlong(decoder.decode(head), decoder.decode(tail));
    else if (size > 0) on.line(decoder.decode(joinBytes(parts)).replace(/\r$/, ""));
    parts = [];
    size = 0;
    head = null;
    tail = new Uint8Array(0);
  };
  try {
    for await (const chunk of stream) {
      let from = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, from)) {
        add(chunk.subarray(from, at));
        end();
        from = at + 1;
      }
      if (from < chunk.byteLength) add(chunk.slice(from));
    }
  } catch {
    // The pipe broke with the process; its exit says what happened.
  }
}

/**
 * The id of a response dropped for its size, from the ends kept of it: JSON-RPC libraries
 * write `id` either right after `jsonrpc` or as the last key.
 */
export function sniffId(head: string, tail: string): number | undefined {
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)/.exec(head) ??
    /"id"\s*:\s*(\d+)\s*\}\s*$/.exec(tail);
  return match === null ? undefined : Number(match[1]);
}

function _lastBytes(kept: Uint8Array, more: Uint8Array, count: number): Uint8Array {
  const joined = joinBytes([kept, more]);
  return joined.slice(Math.max(0, joined.byteLength - count));
}
