// The frame of every human page on {auth_url} (accounts, consent, approvals), and how those
// pages write a moment. No JavaScript is needed (a page may add its own script file as an
// enhancement); readable without the stylesheet.
import { button } from "./components.ts";
import { type Html, html, page } from "./html.ts";

export interface AuthPageOptions {
  readonly title: string;
  readonly main: Html;
  /** Links after the home link in the header, e.g. the approvals list. */
  readonly links?: readonly { readonly href: string; readonly label: string }[];
  /** Who is signed in; with a CSRF token, the header carries the sign-out form. */
  readonly signedIn?: { readonly email: string; readonly signOutCsrf?: string };
  /** Extra elements for the head: a page's own script file (its CSP must allow it). */
  readonly head?: Html;
}

/**
 * What waits behind a sign-in's way back (the application asking, the approval, the connection),
 * in a sentence for the sign-in and sign-up pages; null when the path is not the describer's.
 * Read before anyone signed in: it says nothing the link's holder could not learn by signing in.
 */
export type ReturnDescriber = (returnTo: URL) => Promise<Html | null>;

/**
 * Where the way back after signing in goes on to, off our origin (a connect link leads to the
 * upstream's sign-in): URLs whose origins the sign-in confirmation's `form-action` must allow,
 * since browsers apply it to every redirect after the form. Empty when none or not the path's.
 */
export type ReturnTargets = (returnTo: URL) => Promise<readonly string[]>;

export function authPage(options: AuthPageOptions): string {
  const { signedIn } = options;
  const links = (options.links ?? []).map((link) => [
    " · ",
    html`<a href="${link.href}">${link.label}</a>`,
  ]);
  const who = signedIn === undefined
    ? ""
    : signedIn.signOutCsrf === undefined
    ? html`<p>Signed in as ${signedIn.email}</p>`
    : html`
      <form method="post" action="/sign-out">
        <p>Signed in as ${signedIn.email}</p>
        <input type="hidden" name="csrf" value="${signedIn.signOutCsrf}">
        ${button("Sign out", { kind: "secondary" })}
      </form>
    `;
  return page({
    title: `${options.title} · Vestibule`,
    ...(options.head === undefined ? {} : { head: options.head }),
    body: html`
      <header>
        <p><a href="/account">Vestibule</a>${links}</p>
        ${who}
      </header>
      <main>
        <h1>${options.title}</h1>
        ${options.main}
      </main>
    `,
  });
}

/** A moment to the minute, in UTC: `2026-03-01 12:20 UTC`. */
export function utcMinute(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** The same moment as a page shows it: never wrapped, machine-readable for the browser. */
export function moment(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${utcMinute(ms)}</time>`;
}
