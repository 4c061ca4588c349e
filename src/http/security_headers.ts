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
 * Every page's CSP, except that its forms may also lead to `targets` (each one's origin, or the
 * scheme of a non-web URI) — browsers apply `form-action` to the redirect that follows a form
 * submission (CSP 3 §6.3.1), so 'self' alone would block a way out of our pages.
 */
export function cspWithFormTargets(targets: readonly string[]): string {
  const sources = targets.map((target) => {
    const url = new URL(target);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
  });
  return HTML_SECURITY_HEADERS["Content-Security-Policy"]!.replace(
    "form-action 'self'",
    ["form-action 'self'", ...new Set(sources)].join(" "),
  );
}

/**
 * A page that loads our own script files (progressive enhancement, e.g. the copy buttons of
 * /account): `script-src 'self'`, never inline code or handlers.
 */
export const OWN_SCRIPTS_CSP = HTML_SECURITY_HEADERS["Content-Security-Policy"]!.replace(
  "default-src 'none';",
  "default-src 'none'; script-src 'self';",
);

/**
 * The public documents need even less: no forms, no images, only the stylesheet.
 * CSP `default-src 'none'` plus exactly that (issue 2, HTTP behaviour).
 */
export const DOCUMENT_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...HTML_SECURITY_HEADERS,
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
});
