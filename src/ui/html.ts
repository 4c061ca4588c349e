/**
 * Auto-escaping HTML templates: every interpolated value is escaped unless it is itself
 * Html (made by `html` or, for trusted constant markup, `unsafeHtml`). Arrays are joined.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Interpolation = Html | string | number | boolean | null | undefined | readonly Interpolation[];

function _render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(_render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += _render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup we wrote ourselves; never pass anything that came from outside. */
export function unsafeHtml(markup: string): Html {
  return new Html(markup);
}

/**
 * Only http(s) and mailto links, and same-document or relative ones, are rendered as links;
 * anything else (javascript:, data:, vbscript:, …) is refused by returning null.
 */
export function safeHref(href: string): string | null {
  const trimmed = href.trim();
  if (/^(#|\/(?!\/)|\.{0,2}\/)/.test(trimmed)) return trimmed;
  if (!URL.canParse(trimmed)) return null;
  const protocol = new URL(trimmed).protocol;
  return protocol === "https:" || protocol === "http:" || protocol === "mailto:" ? trimmed : null;
}

export interface PageOptions {
  readonly title: string;
  readonly body: Html;
  /** Absolute or root-relative URL of the stylesheet on this page's origin. */
  readonly stylesheet?: string;
  readonly lang?: string;
  /** Extra elements for the head, such as `<link rel="alternate">`. */
  readonly head?: Html;
}

/** A whole document with landmarks left to the body; readable without the stylesheet. */
export function page(options: PageOptions): string {
  return html`
    <!doctype html>
    <html lang="${options.lang ?? "en"}">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${options.title}</title>
        <link rel="stylesheet" href="${options.stylesheet ?? "/assets/style.css"}">
        ${options.head}
      </head>
      <body>
    ${options.body}
      </body>
    </html>
  `.value;
}
