/**
 * What /account shows of the workspace for one business: each client's agent connection
 * test status, and for owners the latest audit log entries. The accounts part owns the
 * page; it places this section under each business.
 */
import type { Accounts, Role } from "../accounts/model.ts";
import { utcMinute } from "../ui/auth_pages.ts";
import { type Html, html } from "../ui/html.ts";
import type { AuditEntry, AuditLog } from "./audit.ts";
import type { ConnectionTests } from "./connection_tests.ts";

/** How many audit entries the page shows per business. */
export const ACCOUNT_AUDIT_ENTRIES = 20;

const ACTOR_WORDS: Readonly<Record<AuditEntry["actor"], string>> = {
  agent: "agent",
  human: "person",
  operator: "by the operator",
};

export type WorkspaceAccountSection = (businessId: string, role: Role) => Promise<Html>;

export function createWorkspaceAccountSection(deps: {
  readonly connectionTests: ConnectionTests;
  readonly audit: AuditLog;
  readonly accounts: Accounts;
  readonly now: () => number;
}): WorkspaceAccountSection {
  const { connectionTests: tests, audit, accounts, now } = deps;

  return async (businessId, role) => {
    const attempts = await tests.statuses(businessId);
    const status = (a: (typeof attempts)[number]) =>
      a.status === "verified"
        ? `verified ${utcMinute(a.verifiedAt ?? a.createdAt)}`
        : a.expiresAt <= now()
        ? "not verified (the last attempt expired)"
        : "waiting for the agent to verify";
    const connections = attempts.length === 0
      ? html`<p class="muted">No agent has run the connection test in this business.</p>`
      : html`
        <table>
          <caption>Agent connection test</caption>
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>${attempts.map((a) =>
            html`
              <tr>
                <td>${a.clientId}</td>
                <td data-connection-status="${a.status}">${status(a)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `;
    if (role !== "owner") return connections;

    const entries = await audit.list(businessId, { limit: ACCOUNT_AUDIT_ENTRIES });
    const emails = new Map<string, string>();
    for (const id of new Set(entries.map((e) => e.accountId))) {
      if (id !== null) emails.set(id, (await accounts.getAccount(id))?.email ?? "a former member");
    }
    const log = entries.length === 0
      ? html`<p class="muted">Nothing has been changed through agents or approvals yet.</p>`
      : html`
        <table>
          <caption>Audit log (latest ${ACCOUNT_AUDIT_ENTRIES})</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Client</th>
              <th scope="col">What</th>
            </tr>
          </thead>
          <tbody>${entries.map((e) =>
            html`
              <tr>
                <td>${utcMinute(e.at)}</td>
                <td>${e.accountId === null
                  ? "the business's systems"
                  : emails.get(e.accountId)} (${ACTOR_WORDS[e.actor]})</td>
                <td>${e.clientId ?? ""}</td>
                <td>${e.action}: ${e.summary}</td>
              </tr>
            `
          )}</tbody>
        </table>
      `;
    return html`${connections}${log}`;
  };
}
