// /account/servers: a business's upstream servers and their tools, as its people see them. Owners
// read each upstream's state and every tool's settings, pinned definition and held change;
// members read which servers exist and whether they connected their own account. Read-only: the
// operator's file decides the servers and their settings, the page says so.
import { countOf } from "../../count_words.ts";
import { authPage, moment } from "../../ui/auth_pages.ts";
import { linkButton, notice, table } from "../../ui/components.ts";
import { type Html, html } from "../../ui/html.ts";
import type { ToolRow, UpstreamRow } from "./inventory.ts";

export interface ServersPageOptions {
  readonly email: string;
  readonly business: { readonly id: string; readonly name: string };
  readonly owner: boolean;
  readonly upstreams: readonly UpstreamRow[];
  /** Whether people's own connections can be kept (VESTIBULE_UPSTREAM_KEY_FILE). */
  readonly connectable: boolean;
}

/** The upstream's state in words, as a short phrase. */
function _state(row: UpstreamRow): Html {
  const say = (state: string, words: Html | string) =>
    html`<span class="state" data-state="${state}">${words}</span>`;
  if (row.state === "down") {
    return say(
      "down",
      row.downSince === null ? "down" : html`down since ${moment(row.downSince)}`,
    );
  }
  if (row.state === "held") return say("held", "held: none of its tools are served");
  if (row.personal && row.own?.status !== "connected") {
    return say(
      "needs-connecting",
      row.own === null ? "needs connecting (your own account)" : "needs reconnecting",
    );
  }
  if (row.state === "starting") {
    return say("starting", row.personal ? "no one connected it yet" : "not listed yet");
  }
  const held = row.tools.filter((tool) => tool.hold !== null && !tool.hold.leftOut).length;
  return held === 0
    ? say("up", "up")
    : say("held-changes", `up; ${countOf(held, "change")} held for approval`);
}

/** The last error, in words, with what to do about it. */
function _problem(row: UpstreamRow): Html | string {
  if (row.problem === null) return "";
  const who = row.state === "held"
    ? "The operator of this Vestibule must correct the names in the upstreams file."
    : "Agents' calls of its tools fail until it answers; its operator can tell why.";
  return html`<p class="problem"><strong>Last error:</strong> ${row.problem}. ${who}</p>`;
}

function _connection(row: UpstreamRow, businessId: string, connectable: boolean): Html | string {
  if (!row.personal) return "Shared: no account of your own is needed.";
  if (!connectable) return "Each person signs in to it, but this Vestibule cannot keep sign-ins.";
  const status = row.own === null
    ? "You have not connected your account."
    : row.own.status === "connected"
    ? html`You connected your account ${moment(row.own.connectedAt)}.`
    : "Your connection needs reconnecting.";
  return html`<span data-upstream="${row.name}" data-status="${row.own?.status ?? "none"}">${status}
    <a href="/connections/${row.name}?business=${businessId}">${
    row.own === null ? `Connect your ${row.title} account` : "Manage your connection"
  }</a></span>`;
}

function _settings(tool: ToolRow): Html {
  const words: (Html | string)[] = [];
  if (tool.hidden) words.push(html`<strong data-setting="hidden">hidden</strong> from agents`);
  if (tool.gated) {
    words.push(html`<strong data-setting="gated">gated</strong>: each call needs approval`);
  }
  if (!tool.hidden && !tool.gated) words.push("called directly");
  return html`${words.map((w, i) => html`${i === 0 ? "" : html`<br>`}${w}`)}`;
}

function _definition(tool: ToolRow): Html | string {
  const parts: (Html | string)[] = [];
  if (tool.hold !== null) {
    parts.push(html`
      <p class="held"
        data-held="${tool.hold.gateId}">${tool.hold.change === "new"
          ? "New tool"
          : "Changed definition"} ${tool.hold.leftOut
          ? "left out of an approval"
          : "held for approval"}: <a href="/approvals/${tool.hold.gateId}">see the approval</a></p>
    `);
  }
  if (tool.leftOut !== null) {
    parts.push(html`<p class="held">Left out: ${tool.leftOut}.</p>`);
  }
  if (!tool.listed && !tool.hidden) parts.push(html`<p class="muted">No longer listed.</p>`);
  if (tool.pin === null) {
    if (!tool.hidden && tool.hold === null && tool.leftOut === null) {
      parts.push(html`<p class="muted">Not pinned yet.</p>`);
    }
  } else {
    parts.push(html`
      <details class="definition">
        <summary>Pinned ${moment(tool.pin.pinnedAt)}</summary>
        <pre>${JSON.stringify(tool.pin.definition, null, 2)}</pre>
      </details>
    `);
  }
  return html`${parts}`;
}

function _tools(row: UpstreamRow): Html | string {
  if (row.tools.length === 0) {
    return html`<p class="muted">No tools known yet: they appear once ${row.title} lists them.</p>`;
  }
  return table<ToolRow>(html`Tools of ${row.title}`, [
    {
      label: "Tool",
      cell: (tool) =>
        html`<code>${tool.name}</code>${
          tool.title === null ? "" : html`<br><strong>${tool.title}</strong>`
        }${
          tool.description === null ? "" : html`<br><span class="muted">${tool.description}</span>`
        }`,
    },
    { label: "Scope", cell: (tool) => html`<code>${tool.scope}</code>` },
    { label: "Calls", cell: _settings },
    { label: "Definition", cell: _definition },
  ], row.tools);
}

function _ownerSection(row: UpstreamRow, options: ServersPageOptions): Html {
  return html`
    <section class="card" aria-labelledby="upstream-${row.name}" data-upstream="${row.name}">
      <h2 id="upstream-${row.name}">${row.title}</h2>
      <p><strong>State:</strong> ${_state(row)}</p>
      ${_problem(row)}
      ${row.personal
        ? html`<p>${_connection(row, options.business.id, options.connectable)}</p>`
        : ""}
      ${_tools(row)}
      ${row.toolsNotShown === 0 ? "" : html`<p class="muted" id="tools-not-shown-${row.name}">
        ${countOf(row.toolsNotShown, "more tool")} not shown: this page shows the first
        ${row.tools.length}. Held changes are all on <a href="/approvals">the approvals page</a>.
      </p>`}
    </section>
  `;
}

function _memberTable(options: ServersPageOptions): Html {
  return table<UpstreamRow>("Servers your agents can reach here", [
    { label: "Server", cell: (row) => html`<span data-upstream="${row.name}">${row.title}</span>` },
    {
      label: "Your account",
      cell: (row) => _connection(row, options.business.id, options.connectable),
    },
  ], options.upstreams);
}

/** What the operator controls, and where; an owner reads which settings the file holds. */
function _operatorNote(owner: boolean): Html {
  return html`
    <p class="muted" id="operator-controls">The operator of this Vestibule declares these servers
    in the upstreams file (<code>VESTIBULE_UPSTREAMS</code>) on the server${owner
      ? html`: their titles, which businesses they serve, which tools are gated (each call waits
        for an owner's approval), hidden or need a scope of their own. This page only shows that
        file; ask the operator to change it. Owners decide the rest: approvals of calls and of
        changed definitions, and who is a member`
      : html`; ask them to change it`}.</p>
  `;
}

export function serversPage(options: ServersPageOptions): string {
  const { business, owner, upstreams } = options;
  const main = upstreams.length === 0
    ? html`<p>No upstream server serves ${business.name}: agents here use Vestibule's own
      tools only.</p>`
    : owner
    ? html`
      <p>Each server below serves the agents of ${business.name} its tools, under the settings
      shown. A changed definition is held until an owner approves it; agents keep the pinned one
      meanwhile.</p>
      ${upstreams.map((row) => _ownerSection(row, options))}
    `
    : html`
      <p>These servers serve the agents of ${business.name}. Its owners see their tools and
      settings.</p>
      ${_memberTable(options)}
    `;
  return authPage({
    title: `Servers and tools of ${business.name}`,
    signedIn: { email: options.email },
    ...(owner ? { links: [{ href: "/approvals", label: "Approvals" }] } : {}),
    main: html`
      ${main}
      ${_operatorNote(owner)}
      <p class="actions">${linkButton("/account", "Back to your account")}</p>
    `,
  });
}

/** A refused address: no business given, or not one of the person's (the same words either way). */
export function serversErrorPage(email: string, title: string, message: string): string {
  return authPage({
    title,
    signedIn: { email },
    main: html`${notice("error", message)}<p><a href="/account">Back to your account</a></p>`,
  });
}
