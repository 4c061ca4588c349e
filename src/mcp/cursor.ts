// Opaque, tamper-evident tools/list cursors. The catalogue is fixed for the life of a process
// and has few pages, so each page boundary gets one 128-bit token, and a cursor is valid exactly
// when it is one of those tokens: nothing is decoded from what the client sends, so nothing can
// be tampered with. A token is derived from the catalogue and the offset, so every replica of
// one release and configuration issues and accepts the same cursors (a client's next page may
// reach another replica); after an upgrade that changes the catalogue an old cursor is stale
// (-32602) and the client lists again from the start.
import { createHash } from "node:crypto";
import { base64url } from "../secrets.ts";

export interface PageCursors {
  /** The cursor that resumes listing at `offset` (a page boundary). */
  cursorFor(offset: number): string;
  /** The offset a cursor resumes at, or undefined when it is forged or stale. */
  offsetOf(cursor: string): number | undefined;
}

export interface PageCursorOptions {
  /** Every offset a page may start at, besides 0. */
  readonly offsets: readonly number[];
  /** The whole catalogue as text (the tools/list entries): cursors change when it does. */
  readonly catalogue: string;
}

const TOKEN_BYTES = 16;

export function createPageCursors(options: PageCursorOptions): PageCursors {
  const byOffset = new Map<number, string>();
  const byCursor = new Map<string, number>();
  for (const offset of options.offsets) {
    // Synchronous SHA-256 (node:crypto is built into Deno): the pages are cut at start-up.
    const digest = createHash("sha256").update(`${offset}\n${options.catalogue}`).digest();
    const cursor = base64url(new Uint8Array(digest.subarray(0, TOKEN_BYTES)));
    byOffset.set(offset, cursor);
    byCursor.set(cursor, offset);
  }
  return {
    cursorFor(offset) {
      const cursor = byOffset.get(offset);
      if (cursor === undefined) throw new RangeError(`No page starts at offset ${offset}`);
      return cursor;
    },
    offsetOf: (cursor) => byCursor.get(cursor),
  };
}
