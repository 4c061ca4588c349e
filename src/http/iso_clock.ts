/**
 * ISO 8601 text of a time in milliseconds, made at most once per millisecond: the request log
 * stamps every line, and `Date.prototype.toISOString` cost 1-2 µs a call, a third of what the
 * log line costs in all (bench as-run), while a busy server answers many requests per ms.
 */
export function isoClock(): (ms: number) => string {
  let lastMs = NaN;
  let lastText = "";
  return (ms) => {
    if (ms !== lastMs) {
      lastMs = ms;
      lastText = new Date(ms).toISOString();
    }
    return lastText;
  };
}
