// The approval pages of {auth_url}: plain HTML, no JavaScript; the owner reads exactly what
// approving does and presses one of two buttons.
import { authPage, moment } from "../../ui/auth_pages.ts";
import { button, facts, notice, onDemand } from "../../ui/components.ts";
import { escapeHtml, type Html, html, unsafeHtml } from "../../ui/html.ts";
import { prettyJson } from "../../canonical_json.ts";
import { countOf } from "../../count_words.ts";
import { servedToolName } from "../../config/upstreams.ts";
import { type DiffLine, lineDiff } from "../../ui/line_diff.ts";
import type { Gate } from "../domain/gate_record.ts";
import { isUpstreamChange } from "../domain/gate_words.ts";
import type { BatchTool } from "../domain/definition_batches.ts";

/** How much of an upstream's answer the page shows (the agent reads it whole). */
const PAGE_RESULT_CHARS = 20_000;

export interface GateListItem {
  readonly gate: Gate;
  readonly businessName: string;
  readonly canDecide: boolean;
  /** The gate in one line, with an upstream call's arguments (gate_words.ts). */
  readonly headline: string;
  /** Who asked, through which agent; or which upstream changed its tools. */
  readonly askedBy: string;
}

export interface GateDetail {
  readonly gate: Gate;
  readonly businessName: string;
  readonly requesterEmail: string;
  readonly deciderEmail: string | null;
  /** The title of the upstream the gate is about; null when none (or it no longer serves). */
  readonly upstreamTitle: string | null;
  /** An upstream tool's own description, as pinned for the business; null when none. */
  readonly toolDescription: string | null;
  /** The form's CSRF token when the viewer is an owner and the gate is pending. */
  readonly csrf: string | null;
  readonly notice?: string;
  /** The viewer has just decided it: the page confirms what happened and what comes next. */
  readonly justDecided?: boolean;
  /** Why the change will wait for the business's systems (gate_handoffs.ts), or null. */
  readonly waiting: string | null;
  /** Why approving would not apply it as things stand (pending gates only), or null. */
  readonly refusal: string | null;
  /** What an approved upstream call answered, or null. */
  readonly result: Readonly<Record<string, unknown>> | null;
  /** The tools an upstream change holds under the gate (approve_tool_definitions). */
  readonly batch?: readonly BatchTool[];
}

/** The decision form's id: a batch's "Leave out" boxes, beside each tool, belong to it. */
const DECISION_FORM = "decision";

function _layout(title: string, email: string, main: Html): string {
  return authPage({
    title,
    main,
    links: [{ href: "/approvals", label: "Approvals" }, { href: "/account", label: "Account" }],
    signedIn: { email },
  });
}

function _status(gate: Gate): string {
  if (gate.status === "pending") return "Waiting for an owner's decision";
  if (gate.status === "declined") return "Declined";
  if (gate.status === "withdrawn") {
    return "Withdrawn by the agent that asked; it can no longer be approved";
  }
  if (gate.failed) return "Approved; the call failed";
  return gate.applied ? "Approved and applied" : "Approved, not applied";
}

export function approvalsListPage(email: string, items: readonly GateListItem[]): string {
  const pending = items.filter((i) => i.gate.status === "pending");
  const decided = items.filter((i) => i.gate.status !== "pending");
  const row = (item: GateListItem) =>
    html`
      <li class="approval">
        <a href="/approvals/${item.gate.id}">${item.headline}</a>
        <br><small class="muted">${item.businessName} · ${item.askedBy} · ${_status(
          item.gate,
        )} · ${moment(item.gate.createdAt)}</small>
      </li>
    `;
  return _layout(
    "Approvals",
    email,
    html`
      <p>Agents prepare these, and upstreams that change their tools ask for them; nothing in them
      happens until an owner of the business approves.</p>
      <h2>Waiting</h2>
      ${pending.length === 0
        ? html`<p class="muted">Nothing is waiting.</p>`
        : html`<ul class="list">${pending.map(row)}</ul>`}
      <h2>Decided</h2>
      ${decided.length === 0
        ? html`<p class="muted">Nothing yet.</p>`
        : html`<ul class="list">${decided.map(row)}</ul>`}
    `,
  );
}

export function approvalPage(email: string, detail: GateDetail): string {
  const { gate } = detail;
  const title = detail.upstreamTitle ??
    ("upstream" in gate.action ? gate.action.upstream : null);
  const action = gate.action;
  return _layout(
    "Approval request",
    email,
    html`
      ${detail.justDecided ? _confirmation(gate) : ""}
      ${detail.notice ? notice("warning", detail.notice) : ""}
      <p class="lead"><strong>${gate.summary}</strong></p>
      ${facts([
        ["Business", detail.businessName],
        isUpstreamChange(gate)
          ? ["Changed by", html`${title}, an upstream: no agent asked for this`]
          : [
            "Asked by",
            html`${detail.requesterEmail}, through ${gate.clientName} ${
              onDemand("client id", gate.clientId)
            }`,
          ],
        ["Permission", html`<code>${gate.scope}</code> (tool <code>${gate.tool}</code>)`],
        [isUpstreamChange(gate) ? "Seen at" : "Asked at", moment(gate.createdAt)],
        [
          "Expires",
          action.type === "call_upstream" && gate.status === "pending"
            ? html`${moment(action.expiresAt)}: approved later, the call is not made`
            : null,
        ],
        ["Status", html`<span id="gate-status">${_status(gate)}</span>`],
        ["Outcome", gate.outcome],
        [
          "Decided by",
          detail.deciderEmail && gate.decidedAt
            ? html`${detail.deciderEmail} at ${moment(gate.decidedAt)}`
            : null,
        ],
      ])}
      ${detail.refusal === null ? "" : html`
        <div class="notice warning" role="status">
          <p id="gate-refusal"><strong>Approving will not apply this now.</strong> ${detail
            .refusal}.</p>
        </div>
      `}
      ${detail.waiting === null ? "" : html`
        <div class="notice warning" role="status">
          <p id="gate-waiting"><strong>Nothing will carry this out yet.</strong> ${detail
            .waiting}</p>
        </div>
      `}
      ${detail.batch === undefined
        ? _actionDetail(gate, detail)
        : _batchDetail(gate, title ?? "", detail.batch, detail.csrf !== null)}
      ${detail.csrf
        ? html`
          <form method="post" action="/approvals/${gate.id}" id="${DECISION_FORM}">
            <input type="hidden" name="csrf" value="${detail.csrf}">
            <p>Nothing happens until you decide. Approving does exactly what is written above,
            once; ${isUpstreamChange(gate)
              ? "declining serves none of these tools: they stay held"
              : "declining does nothing and tells the agent"}.</p>
            <div class="actions">
              ${button("Approve", { kind: "primary", name: "decision", value: "approve" })}
              ${button("Decline", { kind: "destructive", name: "decision", value: "decline" })}
            </div>
          </form>
        `
        : gate.status === "pending"
        ? notice("info", `Only an owner of ${detail.businessName} can decide this.`)
        : ""}
    `,
  );
}

/** After the viewer's own decision: what happened, and what happens next. */
function _confirmation(gate: Gate): Html {
  if (gate.status === "withdrawn") {
    return notice(
      "info",
      "The agent that asked withdrew this request before a decision: nothing was done, and it can no longer be approved.",
      "decision-confirmation",
    );
  }
  if (gate.status === "declined") {
    return notice(
      "success",
      "You declined it. Nothing was done; the agent learns it the next time it asks about this approval.",
      "decision-confirmation",
    );
  }
  if (gate.failed) {
    return notice(
      "warning",
      html`
        <p>You approved it, but it failed. ${gate.outcome}.</p>
        <p>The agent learns it the next time it asks about this approval.</p>
      `,
      "decision-confirmation",
    );
  }
  return gate.applied
    ? notice(
      "success",
      html`
        <p>You approved it.${gate.outcome
          ? html`
            Done: ${gate.outcome}.
          `
          : ""}</p>
        <p>The agent learns it the next time it asks about this approval.</p>
      `,
      "decision-confirmation",
    )
    : notice(
      "warning",
      html`
        <p>You approved it. ${gate.outcome ?? "It was not applied."}</p>
        <p>Nothing was changed. The agent learns it the next time it asks.</p>
      `,
      "decision-confirmation",
    );
}

/** What an upstream call or a tool definition approval is exactly, beyond its summary. */
function _actionDetail(gate: Gate, detail: GateDetail): Html | string {
  const { action } = gate;
  const title = detail.upstreamTitle ?? ("upstream" in action ? action.upstream : "");
  if (action.type === "call_upstream") {
    return html`
      <h2>The call</h2>
      <p>The tool <code>${action.tool}</code> of ${title}${detail.toolDescription === null
        ? "."
        : html`, which its upstream describes so:`}</p>
      ${detail.toolDescription === null
        ? ""
        : html`<blockquote id="tool-description">${detail.toolDescription}</blockquote>`}
      <p>With these arguments:</p>
      <pre>${prettyJson(action.arguments)}</pre>
      ${onDemand("SHA-256 of the arguments", action.argumentsSha256)}
      ${detail.result === null ? "" : _answer(detail.result)}
    `;
  }
  if (action.type === "approve_tool_definition") {
    const before = action.previous === null ? "" : prettyJson(action.previous);
    const lines = lineDiff(before, prettyJson(action.definition));
    return html`
      <h2>${action.change === "new" ? "The new tool's definition" : "What changed"}</h2>
      <p>${title}, tool <code>${action.tool}</code>. Removed lines are marked −, added lines
      +.</p>
      <pre class="diff">${_diffLines(lines)}</pre>
    `;
  }
  return "";
}

/** What the upstream answered; past PAGE_RESULT_CHARS, its beginning and where the rest is. */
function _answer(result: Readonly<Record<string, unknown>>): Html {
  const text = prettyJson(result);
  if (text.length <= PAGE_RESULT_CHARS) {
    return html`
      <h2>What the upstream answered</h2>
      <pre>${text}</pre>
    `;
  }
  return html`
    <h2>What the upstream answered</h2>
    <p id="result-cut">The answer is ${text.length} characters long; its first ${PAGE_RESULT_CHARS}
    are shown. The agent reads it whole with <code>get_approval</code>.</p>
    <pre>${text.slice(0, PAGE_RESULT_CHARS)}</pre>
  `;
}

/**
 * Every tool an upstream change holds, each with what would be served: the difference from the
 * definition served now, or a new tool's whole definition, and whether its calls will need an
 * approval. While the owner decides, each has a "Leave out" box of the decision form.
 */
function _batchDetail(
  gate: Gate,
  title: string,
  tools: readonly BatchTool[],
  deciding: boolean,
): Html {
  if (gate.action.type !== "approve_tool_definitions") return html``;
  const { upstream } = gate.action;
  const tool = (item: BatchTool) => {
    const before = item.previous === null ? "" : prettyJson(item.previous);
    return html`
      <section class="batch-tool">
        <h3><code>${servedToolName(upstream, item.tool)}</code>: ${item.change === "new"
          ? "a new tool"
          : "a changed definition"}</h3>
        <p>${item.gated
          ? "Each call of it will need an owner's approval (the upstream's gated tools)."
          : "Its calls will not need an owner's approval: agents with the scope call it directly."}</p>
        ${item.leftOut
          ? html`<p><strong>Left out of this approval:</strong> it stays held.</p>`
          : ""}
        <pre class="diff">${_diffLines(lineDiff(before, prettyJson(item.definition)))}</pre>
        ${deciding
          ? html`
            <label
              class="choice"><input type="checkbox" name="leave_out" value="${item
                .tool}" form="${DECISION_FORM}"${item.leftOut ? " checked" : ""}> Leave out ${item
                .tool}</label>
          `
          : ""}
      </section>
    `;
  };
  return html`
    <h2>The tools</h2>
    <p>${title}, ${countOf(tools.length, "tool")} ${gate.status ===
        "pending"
      ? "waiting"
      : "still held"}. A changed definition shows what changed, a new tool its whole
    definition; removed lines are marked −, added lines +.${deciding
      ? " Approving serves every tool not left out; a tool left out stays held until the upstream changes it again."
      : ""}</p>
    ${tools.map(tool)}
  `;
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

export function approvalErrorPage(email: string, title: string, message: string): string {
  return _layout(title, email, notice("error", message));
}
