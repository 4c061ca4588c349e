// The authorization server's pages: business choice, consent and errors. No JavaScript.
import { businessLabels } from "../accounts/business_names.ts";
import type { Business, Role } from "../accounts/model.ts";
import { cspWithFormTargets } from "../http/security_headers.ts";
import { authPage } from "../ui/auth_pages.ts";
import { button, notice } from "../ui/components.ts";
import { type Html, html } from "../ui/html.ts";
import {
  DEFAULT_SCOPES,
  isScope,
  MONEY_SCOPES,
  OWNER_ONLY_REASON,
  type Scope,
  type ScopeCatalogue,
} from "./scopes.ts";
import type { Transaction } from "./transactions.ts";

function _layout(title: string, main: Html): string {
  return authPage({ title, main });
}

/** Who is asking, as the human needs to judge it: name, how it is known, where it returns. */
function _clientFacts(txn: Transaction): Html {
  const redirect = URL.canParse(txn.redirectUri) ? new URL(txn.redirectUri) : null;
  const host = redirect === null
    ? txn.redirectUri
    : redirect.host !== ""
    ? redirect.host
    : `${redirect.protocol} (an application on this device)`;
  const how = txn.registration === "dynamic"
    ? "It registered itself through dynamic client registration, so its name is its own claim."
    : html`It is identified by its client metadata document at <code>${txn.clientId}</code>.`;
  // MCP 2026-07-28 "Localhost Redirect URI Risks": nothing proves which program listens on
  // this computer (http is registrable only on loopback), whatever name or document it shows.
  const local = redirect?.protocol === "http:"
    ? html`
      <div class="notice warning">
        <p id="redirect-warning"><strong>It returns to this computer.</strong> Any program running
      here could be the one asking, whatever its name: allow only if you started this
      application yourself just now.</p>
      </div>
    `
    : "";
  // The facts component's markup, written out for the ids each answer carries.
  return html`
    <dl class="facts">
      <div>
        <dt>Application</dt>
        <dd id="client-name">${txn.clientName ?? "An unnamed application"}</dd>
      </div>
      <div>
        <dt>How it is known</dt>
        <dd id="client-registration">${how}</dd>
      </div>
      <div>
        <dt>It will return you to</dt>
        <dd id="redirect-host"><code>${host}</code></dd>
      </div>
    </dl>
    ${local}
  `;
}

export function chooseBusinessPage(options: {
  txn: Transaction;
  txnId: string;
  csrf: string;
  action: string;
  businesses: readonly { business: Business; role: Role }[];
}): string {
  // Two businesses of one name are told apart (created when, short id).
  const label = businessLabels(options.businesses.map((b) => b.business));
  return _layout(
    "Choose a business",
    html`
      ${_clientFacts(options.txn)}
      <p>Which business should this application work with? It will only see that one.</p>
      <form method="post" action="${options.action}">
        <input type="hidden" name="txn" value="${options.txnId}">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <fieldset>
          <legend>Business</legend>
          ${options.businesses.map(({ business, role }, i) =>
            html`
              <p><label class="choice"><input type="radio" name="business" value="${business
                .id}" ${i ===
                  0
                ? "checked"
                : ""} required> <span>${label(business)} <small>(${role})</small></span></label></p>
            `
          )}
        </fieldset>
        <div class="actions">${button("Continue")}</div>
      </form>
    `,
  );
}

export function consentPage(options: {
  txn: Transaction;
  txnId: string;
  csrf: string;
  action: string;
  business: Business;
  role: Role;
  scopes: ScopeCatalogue;
  /** What the client's current grant in this business holds; empty on a first consent. */
  held: readonly string[];
}): string {
  const { txn, role } = options;
  const business = options.business.name;
  const catalogue = options.scopes;
  const blocked = (scope: string) => role !== "owner" && catalogue.ownerOnly(scope);
  // A step-up: the client already holds a grant here. What it holds is kept (listed apart);
  // what it asks for anew starts ticked, since it asked and the person sees each meaning.
  const kept = options.held.filter((scope) => !blocked(scope));
  const stepUp = kept.length > 0;
  const asked = txn.scopes.filter((scope) => !kept.includes(scope));
  const scopeRows = asked.map((scope) => {
    const id = `scope-${scope.replaceAll(".", "-")}`;
    // Least privilege on a first consent: only the scope every client starts with is ticked;
    // the human ticks anything more (a form posted as shown grants app.access alone).
    const state = blocked(scope)
      ? "disabled"
      : stepUp || DEFAULT_SCOPES.includes(scope as Scope)
      ? "checked"
      : "";
    const marks = _marks(catalogue, scope);
    return html`
      <li>
        <label class="choice" for="${id}">
          <input type="checkbox" id="${id}" name="scope" value="${scope}" ${state}>
          <span><code>${scope}</code>: ${catalogue.meaning(scope)}${marks}</span>
        </label>
        ${blocked(scope)
          ? html`<br><small class="reason">${OWNER_ONLY_REASON} You are a member of ${business}.</small>`
          : ""}
      </li>
    `;
  });
  const ownerOnly = asked.filter(blocked);
  // A member cannot grant these however often the application asks: say so once, plainly,
  // so nobody goes round the loop of asking again.
  const ownerOnlyNotice = ownerOnly.length === 0 ? "" : html`
    <div class="notice warning">
      <p id="owner-only-notice" role="note"><strong>Only an owner of ${business} can allow
    ${ownerOnly.map((scope, i) => html`${i === 0 ? "" : ", "}<code>${scope}</code>`)}.</strong>
    You are a member, so this application cannot get ${ownerOnly.length === 1 ? "it" : "them"}
    from you, whatever it asks: allowing gives it only what you tick below. If it needs more,
    ask an owner of ${business} to connect it.</p>
    </div>
  `;
  const keptList = stepUp
    ? html`
      <section id="already-granted">
        <h2>It already has</h2>
        <p>You allowed this earlier; it keeps it. To take access away, use your account page.</p>
        <ul class="scopes">${kept.map((scope) =>
          html`<li><code>${scope}</code>: ${catalogue.meaning(scope)}${
            _marks(catalogue, scope)
          }</li>`
        )}</ul>
      </section>
    `
    : "";
  const askedList = asked.length === 0
    ? html`<p id="nothing-new">It asks for nothing more than it already has.</p>`
    : html`
      <fieldset>
        <legend>${stepUp ? "It now also asks to" : "The application asks to"}</legend>
        <ul class="scopes">${scopeRows}</ul>
      </fieldset>
    `;
  const guidance = stepUp
    ? html`<p>Each new permission starts ticked because the application asked for it: untick
      any you do not want to allow, or deny. Money, access changes and installations still need
      an owner's separate approval.</p>`
    : html`<p>Apart from <code>app.access</code>, nothing starts ticked: tick only what you want
      to allow. Money, access changes and installations still need an owner's separate
      approval.</p>`;
  return _layout(
    stepUp ? `Allow more access to ${business}?` : `Allow access to ${business}?`,
    html`
      ${_clientFacts(txn)}
      <p>Business: <strong id="business-name">${business}</strong> (you are ${role === "owner"
        ? "an owner"
        : "a member"})</p>
      ${keptList}
      <form method="post" action="${options.action}">
        <input type="hidden" name="txn" value="${options.txnId}">
        <input type="hidden" name="csrf" value="${options.csrf}">
        ${ownerOnlyNotice}
        ${askedList}
        ${guidance}
        <div class="actions">
          ${button("Allow", { kind: "primary", name: "decision", value: "allow" })}
          ${button("Deny", { kind: "secondary", name: "decision", value: "deny" })}
        </div>
      </form>
    `,
  );
}

/** What the human should know before ticking a scope: who may grant it, whether it costs. */
function _marks(catalogue: ScopeCatalogue, scope: string): Html[] {
  return [
    ...(catalogue.ownerOnly(scope)
      ? [html`<em class="mark" data-mark="owner-only">owner only</em>`]
      : []),
    ...(isScope(scope) && MONEY_SCOPES.has(scope)
      ? [html`<em class="mark" data-mark="money">spends money</em>`]
      : []),
  ];
}

/** The consent page's CSP: its form may also lead back to the client's redirect URI. */
export function consentPageCsp(redirectUri: string): string {
  return cspWithFormTargets([redirectUri]);
}

export function authorizationErrorPage(title: string, message: string): string {
  return _layout(
    title,
    html`
      ${notice("error", message)}
      <p>Nothing was shared with the application. Go back to it and start again.</p>
    `,
  );
}
