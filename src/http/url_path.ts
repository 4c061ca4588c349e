/**
 * The path of a request URL without parsing it again. `Request.url` is already the
 * serialisation of a parsed URL (dot segments resolved, percent-encoded), so its path is
 * the text from the first `/` after the authority up to `?` or `#`; this runs on every
 * request, where `new URL()` would cost more than routing itself.
 */
export function pathOf(url: string): string {
  const authority = url.indexOf("//");
  const start = url.indexOf("/", authority === -1 ? 0 : authority + 2);
  if (start === -1) return "/";
  let end = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  if (end === -1 || (hash !== -1 && hash < end)) end = hash;
  return end === -1 ? url.slice(start) : url.slice(start, end);
}
