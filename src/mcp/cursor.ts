// Opaque, tamper-evident tools/list cursors. The catalogue is fixed for the life of a process
// and has few pages, so each page boundary gets a random 128-bit token once, and a cursor is
// valid exactly when it is one of those tokens: nothing is decoded from what the client sends,
// so nothing can be tampered with. Tokens are per process: after a restart an old cursor is
// stale (-32602) and the client lists again from the start.
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
  /** Fills its argument with random bytes; crypto.getRandomValues by default. */
  readonly random?: (bytes: Uint8Array<ArrayBuffer>) => void;
}

const TOKEN_BYTES = 16;

export function createPageCursors(options: PageCursorOptions): PageCursors {
  const random = options.random ?? ((bytes) => crypto.getRandomValues(bytes));
  const byOffset = new Map<number, string>();
  const byCursor = new Map<string, number>();
  for (const offset of options.offsets) {
    const token = new Uint8Array(TOKEN_BYTES);
    random(token);
    const cursor = base64url(token);
    if (byCursor.has(cursor)) throw new Error("Cursor randomness repeated itself");
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
