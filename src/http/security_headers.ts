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

/**
 * The public documents need even less: no forms, no images, only the stylesheet.
 * CSP `default-src 'none'` plus exactly that (issue 2, HTTP behaviour).
 */
export const DOCUMENT_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...HTML_SECURITY_HEADERS,
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
});
