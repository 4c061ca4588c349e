// The approval pages of {auth_url}: plain HTML, no JavaScript; the owner reads exactly what
// approving does and presses one of two buttons.
import { authPage, utcMinute } from "../../ui/auth_pages.ts";
import { escapeHtml, type Html, html, unsafeHtml } from "../../ui/html.ts";
import { canonicalJson } from "../../canonical_json.ts";
import { type DiffLine, lineDiff } from "../../ui/line_diff.ts";
import type { Gate } from "../domain/gates.ts";

export interface GateListItem {
  readonly gate: Gate;
  readonly businessName: string;
  readonly canDecide: boolean;
}

export interface GateDetail {
  readonly gate: Gate;
  readonly businessName: string;
  readonly requesterEmail: string;
  readonly deciderEmail: string | null;
  /** The form's CSRF token when the viewer is an owner and the gate is pending. */
  readonly csrf: string | null;
  readonly notice?: string;
  /** Why the change will wait for the business's systems (gate_handoffs.ts), or null. */
  readonly waiting: string | null;
}

function _layout(title: string, email: string, main: Html): string {
  return authPage({
    title,
    main,
    links: [{ href: "/approvals", label: "Approvals" }],
    signedIn: { email },
  });
}

function _status(gate: Gate): string {
  if (gate.status === "pending") return "Waiting for an owner's decision";
  if (gate.status === "declined") return "Declined";
  return gate.applied ? "Approved and applied" : "Approved, not applied";
}

export function approvalsListPage(email: string, items: readonly GateListItem[]): string {
  const pending = items.filter((i) => i.gate.status === "pending");
  const decided = items.filter((i) => i.gate.status !== "pending");
  const row = (item: GateListItem) =>
    html`
      <li>
        <a href="/approvals/${item.gate.id}">${item.gate.summary}</a>
        <br><small>${item.businessName} · ${item.gate.tool} · ${_status(item.gate)} · ${utcMinute(
          item.gate.createdAt,
        )}</small>
      </li>
    `;
  return _layout(
    "Approvals",
    email,
    html`
      <p>Agents prepare these; nothing in them happens until an owner of the business approves.</p>
      <h2>Waiting</h2>
      ${pending.length === 0
        ? html`<p>Nothing is waiting.</p>`
        : html`<ul>${pending.map(row)}</ul>`}
      <h2>Decided</h2>
      ${decided.length === 0 ? html`<p>Nothing yet.</p>` : html`<ul>${decided.map(row)}</ul>`}
    `,
  );
}

export function approvalPage(email: string, detail: GateDetail): string {
  const { gate } = detail;
  return _layout(
    "Approval request",
    email,
    html`
      ${detail.notice ? html`<p role="status">${detail.notice}</p>` : ""}
      <p><strong>${gate.summary}</strong></p>
      <dl>
        <dt>Business</dt><dd>${detail.businessName}</dd>
        <dt>Asked by</dt><dd>${detail.requesterEmail}, through the client ${gate.clientName} (${gate
          .clientId})</dd>
        <dt>Tool and permission</dt><dd>${gate.tool} (${gate.scope})</dd>
        <dt>Asked at</dt><dd>${utcMinute(gate.createdAt)}</dd>
        <dt>Status</dt><dd id="gate-status">${_status(gate)}</dd>
        ${gate.outcome
          ? html`
            <dt>Outcome</dt>
            <dd>${gate.outcome}</dd>
          `
          : ""}
        ${detail.deciderEmail && gate.decidedAt
          ? html`
            <dt>Decided by</dt>
            <dd>${detail.deciderEmail} at ${utcMinute(gate.decidedAt)}</dd>
          `
          : ""}
      </dl>
      ${detail.waiting === null ? "" : html`
        <p class="warning"
          id="gate-waiting"><strong>Nothing will carry this out yet.</strong> ${detail.waiting}</p>
      `}
      ${_actionDetail(gate)}
      ${detail.csrf
        ? html`
          <form method="post" action="/approvals/${gate.id}">
            <input type="hidden" name="csrf" value="${detail.csrf}">
            <button type="submit" name="decision" value="approve">Approve</button>
            <button type="submit" name="decision" value="decline">Decline</button>
          </form>
        `
        : gate.status === "pending"
        ? html`<p>Only an owner of ${detail.businessName} can decide this.</p>`
        : ""}
    `,
  );
}

/** What an upstream call or a tool definition approval is exactly, beyond its summary. */
function _actionDetail(gate: Gate): Html | string {
  const { action } = gate;
  if (action.type === "call_upstream") {
    return html`
      <h2>The call</h2>
      <p>Upstream <code>${action.upstream}</code>, tool <code>${action
        .tool}</code>, with these arguments (SHA-256 <code>${action
        .argumentsSha256}</code>):</p>
      <pre>${_pretty(action.arguments)}</pre>
      ${gate.status === "pending"
        ? html`<p>Approved after ${utcMinute(action.expiresAt)}, the call is not made.</p>`
        : ""}
      ${gate.result
        ? html`
          <h2>What the upstream answered</h2>
          <pre>${_pretty(gate.result)}</pre>
        `
        : ""}
    `;
  }
  if (action.type === "approve_tool_definition") {
    const before = action.previous === null ? "" : _pretty(action.previous);
    const lines = lineDiff(before, _pretty(action.definition));
    return html`
      <h2>${action.change === "new" ? "The new tool's definition" : "What changed"}</h2>
      <p>Upstream <code>${action.upstream}</code>, tool <code>${action
        .tool}</code>. Removed lines are marked −, added lines +.</p>
      <pre class="diff">${_diffLines(lines)}</pre>
    `;
  }
  return "";
}

/** One line of the <pre> each, marked, with no whitespace of the template between them. */
function _diffLines(lines: readonly DiffLine[]): Html {
  const marked = lines.map(({ kind, text }) =>
    kind === "added"
      ? `<ins>+ ${escapeHtml(text)}</ins>`
      : kind === "removed"
      ? `<del>− ${escapeHtml(text)}</del>`
      : `  ${escapeHtml(text)}`
  );
  return unsafeHtml(marked.join("\n"));
}

/** Members in a stable order, indented: the same value always reads the same. */
function _pretty(value: unknown): string {
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2);
}

export function approvalErrorPage(email: string, title: string, message: string): string {
  return _layout(title, email, html`<p class="error" role="alert">${message}</p>`);
}
