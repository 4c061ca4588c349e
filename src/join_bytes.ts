/**
 * Parts of a body or a line as one array: the part itself when there is one (no copy), else all
 * of them copied into one of `total` bytes (their sum unless the caller counted it already).
 */
export function joinBytes<B extends ArrayBufferLike>(
  parts: readonly Uint8Array<B>[],
  total = parts.reduce((sum, part) => sum + part.byteLength, 0),
): Uint8Array<B | ArrayBuffer> {
  if (parts.length === 1) return parts[0]!;
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.byteLength;
  }
  return joined;
}
