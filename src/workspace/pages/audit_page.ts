// The audit page of one business on {auth_url}: a GET form of filters, the entries in words
// (people by e-mail, agents by name, what happened as its summary; ids on demand) and the links
// to older and newer pages. No JavaScript.
import { authPage, moment } from "../../ui/auth_pages.ts";
import { button, linkButton, notice, onDemand, table } from "../../ui/components.ts";
import { type Html, html } from "../../ui/html.ts";
import type { AuditEntry, PositionedEntry } from "../domain/audit.ts";
import { AUDIT_PAGE_SIZE } from "../domain/audit_search.ts";

/** The form's fields as they came (empty: not filtered), kept in every link. */
export interface AuditFilterFields {
  readonly agent: string;
  readonly person: string;
  readonly action: string;
  readonly from: string;
  readonly to: string;
}

export interface AuditPageView {
  readonly email: string;
  readonly business: { readonly id: string; readonly name: string };
  readonly fields: AuditFilterFields;
  /** What the selects offer: value and words. */
  readonly agents: readonly (readonly [string, string])[];
  readonly people: readonly (readonly [string, string])[];
  readonly actions: readonly string[];
  readonly entries: readonly PositionedEntry[];
  readonly emailOf: (accountId: string) => string;
  readonly clientNameOf: (clientId: string) => string;
  readonly olderCursor: string | null;
  readonly newerCursor: string | null;
  /** When the request stopped at its limit of entries read: the limit, and the link reading on. */
  readonly stopped: { readonly limit: number; readonly link: "Older" | "Newer" } | null;
  readonly filtered: boolean;
  /** A member's page: only the entries of their own account, without the person filter. */
  readonly ownOnly: boolean;
}

const ACTOR_WORDS: Readonly<Record<AuditEntry["actor"], string>> = {
  agent: "through an agent",
  human: "in person",
  operator: "by the operator",
};

const _pageLinks = [{ href: "/account", label: "Your account" }];

/** The page's address with its business, the filters that are set and `extra`. */
export function auditHref(
  businessId: string,
  fields: AuditFilterFields,
  extra: Readonly<Record<string, string>> = {},
): string {
  const query = new URLSearchParams({ business: businessId });
  for (const [name, value] of Object.entries({ ...fields, ...extra })) {
    if (value !== "") query.set(name, value);
  }
  return `/account/audit?${query}`;
}

function _select(
  id: string,
  label: string,
  all: string,
  chosen: string,
  options: readonly (readonly [string, string])[],
): Html {
  // A value that came in the link but is not among the newest entries is still offered.
  const shown = chosen === "" || options.some(([value]) => value === chosen)
    ? options
    : [...options, [chosen, chosen] as const];
  return html`
    <div>
      <label for="${id}">${label}</label>
      <select id="${id}" name="${id}">
        <option value="">${all}</option>
        ${shown.map(([value, words]) =>
          html`<option value="${value}" ${value === chosen ? "selected" : ""}>${words}</option>`
        )}
      </select>
    </div>
  `;
}

export function auditPage(view: AuditPageView): string {
  const { business, fields } = view;
  const who = (e: AuditEntry) =>
    html`${e.accountId === null ? "the business's systems" : view.emailOf(e.accountId)}
      <span class="muted">${ACTOR_WORDS[e.actor]}</span>`;
  const ids = (e: AuditEntry) =>
    [
      `action ${e.action}`,
      e.clientId === null ? null : `client ${e.clientId}`,
      e.accountId === null ? null : `account ${e.accountId}`,
      e.gateId === null ? null : `approval ${e.gateId}`,
      `entry ${e.id}`,
    ].filter((part) => part !== null).join(" · ");
  const entries = view.entries.length === 0
    ? html`<p id="audit-empty">${
      view.filtered
        ? "No entry matches these filters."
        : "Nothing has been recorded in this business yet."
    }</p>`
    : table<PositionedEntry>("Entries, newest first", [
      { label: "When", cell: ({ entry }) => moment(entry.at) },
      { label: "Who", cell: ({ entry }) => who(entry) },
      {
        label: "Agent",
        cell: ({ entry }) => entry.clientId === null ? "—" : view.clientNameOf(entry.clientId),
      },
      {
        label: "What",
        cell: ({ entry }) => html`${entry.summary} ${onDemand("Details", ids(entry))}`,
      },
    ], view.entries);
  const paging = view.olderCursor === null && view.newerCursor === null ? "" : html`
    <nav class="actions" aria-label="Pages of the audit log">
      ${view.newerCursor === null
        ? ""
        : linkButton(auditHref(business.id, fields, { newer: view.newerCursor }), "Newer")}
      ${view.olderCursor === null
        ? ""
        : linkButton(auditHref(business.id, fields, { older: view.olderCursor }), "Older")}
    </nav>
  `;
  return authPage({
    title: view.ownOnly ? `Your audit log in ${business.name}` : `Audit log of ${business.name}`,
    links: _pageLinks,
    signedIn: { email: view.email },
    main: html`
      <p>${view.ownOnly
        ? html`Every change made for you in ${business.name}: by your agents, your approvals and
          revocations, and the operator. Its owners read everyone's.`
        : html`Every change made through agents, approvals, revocations and the operator in
          ${business.name}.`} Newest first, ${AUDIT_PAGE_SIZE} to a page. Times are UTC.</p>
      <form method="get" action="/account/audit" class="filters">
        <input type="hidden" name="business" value="${business.id}">
        ${_select("agent", "Agent", "All agents", fields.agent, view.agents)}
        ${view.ownOnly ? "" : _select("person", "Person", "Everyone", fields.person, view.people)}
        ${_select(
          "action",
          "Action",
          "All actions",
          fields.action,
          view.actions.map((a) => [a, a.replaceAll("_", " ")] as const),
        )}
        <div>
          <label for="from">From (UTC day)</label>
          <input id="from" name="from" type="date" value="${fields.from}">
        </div>
        <div>
          <label for="to">To (UTC day, included)</label>
          <input id="to" name="to" type="date" value="${fields.to}">
        </div>
        <div class="actions">
          ${button("Show entries")}
          ${view.filtered ? linkButton(auditHref(business.id, emptyFields()), "Clear filters") : ""}
        </div>
      </form>
      ${view.stopped === null ? "" : notice(
        "info",
        `This page read ${
          view.stopped.limit.toLocaleString("en")
        } entries and stopped before it was full: "${view.stopped.link}" searches on from there.`,
        "audit-stopped",
      )}
      ${entries}
      ${paging}
    `,
  });
}

export function emptyFields(): AuditFilterFields {
  return { agent: "", person: "", action: "", from: "", to: "" };
}

/** A refusal (bad field, 400) or a business the person may not read (404). */
export function auditErrorPage(email: string, title: string, message: string): string {
  return authPage({
    title,
    links: _pageLinks,
    signedIn: { email },
    main: html`
      ${notice("error", message)}
      <p><a href="/account">Back to your account</a></p>
    `,
  });
}
