// The few building blocks every {auth_url} page is made of, styled by static/style.css:
// buttons that say how weighty they are, notices that say how good or bad the news is, facts
// as a definition list, and tables that turn into labelled rows on a phone.
import { type Html, html } from "./html.ts";

/** Primary: the step the page is for. Secondary: the other way. Destructive: cannot be undone. */
export type ButtonKind = "primary" | "secondary" | "destructive";

export interface ButtonOptions {
  readonly kind?: ButtonKind;
  /** A form's submit field, e.g. `decision` = `approve`. */
  readonly name?: string;
  readonly value?: string;
  /** A longer name for screen readers when the label alone is ambiguous ("Revoke" what). */
  readonly ariaLabel?: string;
}

export function button(label: string, options: ButtonOptions = {}): Html {
  return html`<button type="submit" class="button ${options.kind ?? "primary"}" ${
    options.name === undefined ? "" : html`name="${options.name}" value="${options.value ?? ""}"`
  } ${
    options.ariaLabel === undefined ? "" : html`aria-label="${options.ariaLabel}"`
  }>${label}</button>`;
}

/** A link that looks like a button: a step that only reads (GET). */
export function linkButton(href: string, label: string, kind: ButtonKind = "secondary"): Html {
  return html`<a class="button ${kind}" href="${href}">${label}</a>`;
}

export type NoticeKind = "success" | "info" | "warning" | "error";

/**
 * News for the person. Errors interrupt (role alert); the rest is announced politely (status).
 * `id` lets tests and links find one notice among several.
 */
export function notice(kind: NoticeKind, content: Html | string, id?: string): Html {
  const role = kind === "error" ? "alert" : "status";
  return html`<div class="notice ${kind}" role="${role}" ${
    id === undefined ? "" : html`id="${id}"`
  }>${typeof content === "string" ? html`<p>${content}</p>` : content}</div>`;
}

/** Term and detail pairs; a row whose detail is null or "" is left out. */
export function facts(
  rows: readonly (readonly [string, Html | string | null])[],
  id?: string,
): Html {
  const shown = rows.filter(([, detail]) => detail !== null && detail !== "");
  return html`<dl class="facts" ${id === undefined ? "" : html`id="${id}"`}>${
    shown.map(([term, detail]) =>
      html`
        <div>
          <dt>${term}</dt>
          <dd>${detail}</dd>
        </div>
      `
    )
  }</dl>`;
}

export interface TableColumn<T> {
  readonly label: string;
  readonly cell: (row: T) => Html | string;
}

/**
 * A table with a caption and column headers; on a narrow screen each row becomes a block whose
 * cells carry their column's label (the `data-label` the stylesheet shows).
 */
export function table<T>(
  caption: Html | string,
  columns: readonly TableColumn<T>[],
  rows: readonly T[],
): Html {
  return html`
    <table class="stack">
      <caption>${caption}</caption>
      <thead>
        <tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr>
      </thead>
      <tbody>${rows.map((row) =>
        html`<tr>${columns.map((c) => html`<td data-label="${c.label}">${c.cell(row)}</td>`)}</tr>`
      )}</tbody>
    </table>
  `;
}

/** An identifier people rarely need: shown on demand, selectable to copy. */
export function onDemand(summary: string, value: string): Html {
  return html`<details class="id"><summary>${summary}</summary><code>${value}</code></details>`;
}
