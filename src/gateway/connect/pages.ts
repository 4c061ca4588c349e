// The pages where a person connects their own account of an upstream, and the /account section
// that lists those connections. Plain HTML, no JavaScript, like every {auth_url} page.
import type { Role } from "../../accounts/model.ts";
import { authPage, moment } from "../../ui/auth_pages.ts";
import { button, linkButton, notice, table } from "../../ui/components.ts";
import { type Html, html } from "../../ui/html.ts";
import type { ConnectionView } from "./connection_store.ts";

export interface ConnectPageOptions {
  readonly email: string;
  readonly upstream: { readonly name: string; readonly title: string };
  readonly businessName: string;
  readonly businessId: string;
  readonly connection: ConnectionView | null;
  readonly csrf: string;
  /** Set when the person comes from an agent's consent (then "skip" goes on to the agent). */
  readonly consent: string | null;
  readonly notice?: { readonly kind: "done" | "problem"; readonly text: string };
}

function _state(connection: ConnectionView | null): Html {
  if (connection === null) {
    return html`<p id="connection-status" data-status="none">Not connected.</p>`;
  }
  if (connection.status === "needs_reconnect") {
    return html`
      <div class="notice warning">
        <p id="connection-status" data-status="needs_reconnect">
        <strong>Needs reconnecting:</strong> its sign-in could no longer be renewed
        ${connection.problem === null ? "" : html`(${connection.problem})`}. Agents cannot use its
        tools for you until you connect it again.
        </p>
      </div>
    `;
  }
  return html`
    <p id="connection-status" data-status="connected">
      Connected since ${moment(connection.connectedAt)}.
    </p>
    ${connection.wanted.length === 0 ? "" : html`
      <div class="notice warning">
        <p id="connection-wanted">
        <strong>More permissions wanted:</strong> a call needed permissions your account has not
        granted (${connection.wanted.join(" ")}). Connect again to grant them.
        </p>
      </div>
    `}
  `;
}

export function connectPage(options: ConnectPageOptions): string {
  const { upstream, connection, consent } = options;
  const hidden = html`
    <input type="hidden" name="csrf" value="${options.csrf}">
    <input type="hidden" name="business" value="${options.businessId}">
    ${consent === null ? "" : html`<input type="hidden" name="consent" value="${consent}">`}
  `;
  // Connected and nothing more wanted, the step the page is for is done: going back is the
  // primary action, connecting anew the secondary one.
  const done = connection?.status === "connected" && connection.wanted.length === 0;
  const connectLabel = connection === null
    ? `Connect your ${upstream.title} account`
    : `Reconnect your ${upstream.title} account`;
  return authPage({
    title: `Your ${upstream.title} account`,
    signedIn: { email: options.email },
    main: html`
      ${options.notice === undefined ? "" : notice(
        options.notice.kind === "done" ? "success" : "error",
        options.notice.text,
        "notice",
      )}
      <p>
        Agents you allowed in <strong>${options.businessName}</strong> use ${upstream.title}
        with your own account there, never with anyone else's. Connecting sends you to
        ${upstream.title}'s sign-in; Vestibule keeps the tokens it gives, encrypted, and uses them
        only for your agents' calls of its tools.
      </p>
      ${_state(connection)}
      <form method="post" action="/connections/${upstream.name}">
        ${hidden}
        <div class="actions">
          ${done && consent === null
            ? linkButton("/account", "Back to your account", "primary")
            : ""}
          ${button(connectLabel, {
            kind: done ? "secondary" : "primary",
            name: "action",
            value: "connect",
          })}
          ${consent === null ? "" : button("Skip for now", {
            kind: "secondary",
            name: "action",
            value: "skip",
          })}
        </div>
      </form>
      ${connection === null || consent !== null ? "" : html`
        <form method="post" action="/connections/${upstream.name}">
          ${hidden}
          <p>Disconnecting asks ${upstream.title} to end the tokens it gave, then forgets them.</p>
          ${button("Disconnect", { kind: "destructive", name: "action", value: "disconnect" })}
        </form>
      `}
      ${done && consent === null ? "" : html`<p><a href="/account">Back to your account</a></p>`}
    `,
  });
}

/**
 * What the page says when the upstream's sign-in cannot be opened: what happened and who can
 * mend it, in words; the protocol's details go to the log for the operator.
 */
export function signInUnavailable(title: string): string {
  return `We could not open ${title}'s sign-in, so nothing changed: your account is as it was. ` +
    `The problem lies between Vestibule and ${title}, not with your account. Try again later; ` +
    `if it lasts, tell the operator of this Vestibule, who finds the details in its log.`;
}

/** A problem before any page of an upstream can be shown (unknown upstream, not a member…). */
export function connectErrorPage(email: string | null, title: string, message: string): string {
  return authPage({
    title,
    ...(email === null ? {} : { signedIn: { email } }),
    main: html`
      ${notice("error", message)}
      <p><a href="/account">Back to your account</a></p>
    `,
  });
}

export interface ConnectionRow {
  readonly upstream: { readonly name: string; readonly title: string };
  readonly own: ConnectionView | null;
  /** Everyone's, for an owner; empty for a member. */
  readonly everyone: readonly (ConnectionView & { readonly email: string })[];
}

/** The /account section of one business: each per-person upstream and its connections. */
export function connectionsSection(
  businessId: string,
  role: Role,
  rows: readonly ConnectionRow[],
): Html {
  if (rows.length === 0) return html``;
  const statusWords = (c: ConnectionView | null) =>
    c === null
      ? "not connected"
      : c.status === "connected"
      ? html`connected ${moment(c.connectedAt)}`
      : "needs reconnecting";
  return html`
    ${table("Your accounts of upstream services", [
      { label: "Service", cell: (row: ConnectionRow) => row.upstream.title },
      {
        label: "Your account",
        cell: (row) =>
          html`<span data-upstream="${row.upstream.name}" data-status="${
            row.own?.status ?? "none"
          }">
            ${statusWords(row.own)} ·
            <a href="/connections/${row.upstream.name}?business=${businessId}">${
            row.own === null
              ? `Connect your ${row.upstream.title} account`
              : `Manage your ${row.upstream.title} connection`
          }</a>
          </span>`,
      },
    ], rows)}
    ${role !== "owner" ? "" : table(
      "Who connected which service",
      [
        { label: "Service", cell: (c) => c.service },
        { label: "Person", cell: (c) => c.email },
        { label: "State", cell: (c) => statusWords(c) },
      ],
      rows.flatMap((row) => row.everyone.map((c) => ({ ...c, service: row.upstream.title }))),
    )}
  `;
}
