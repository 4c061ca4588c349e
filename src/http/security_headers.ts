/**
 * Sent with every HTML page: nothing loads but our own stylesheet, nothing frames us,
 * and no referrer leaks a URL (spec §5: secrets never appear in public URLs).
 */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
});
