/**
 * What /account shows of the workspace for one business: each client's agent connection
 * test status, and for owners the approvals waiting for them and the latest audit log
 * entries. The accounts part owns the page; it places this section under each business.
 */
import type { Accounts, Role } from "../../accounts/model.ts";
import { utcMinute } from "../../ui/auth_pages.ts";
import { type Html, html } from "../../ui/html.ts";
import type { AuditEntry, AuditLog } from "../domain/audit.ts";
import type { ConnectionTests } from "../domain/connection_tests.ts";
import type { Gates } from "../domain/gates.ts";

/** How many audit entries the page shows per business. */
export const ACCOUNT_AUDIT_ENTRIES = 20;

/** How many of the newest gates are searched for pending ones, as /approvals does. */
const GATES_SEARCHED = 100;

const ACTOR_WORDS: Readonly<Record<AuditEntry["actor"], string>> = {
  agent: "agent",
  human: "person",
  operator: "by the operator",
};

export type WorkspaceAccountSection = (businessId: string, role: Role) => Promise<Html>;

export function createWorkspaceAccountSection(deps: {
  readonly connectionTests: ConnectionTests;
  readonly audit: AuditLog;
  readonly gates: Pick<Gates, "list">;
  readonly accounts: Accounts;
  readonly now: () => number;
}): WorkspaceAccountSection {
  const { connectionTests: tests, audit, gates, accounts, now } = deps;

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

    const pending = (await gates.list(businessId, { limit: GATES_SEARCHED }))
      .filter((gate) => gate.status === "pending");
    const approvals = pending.length === 0
      ? html`<p class="muted">No approval is waiting for an owner.</p>`
      : html`
        <table>
          <caption>Waiting for an owner's approval</caption>
          <thead>
            <tr>
              <th scope="col">Asked</th>
              <th scope="col">Agent</th>
              <th scope="col">Approving would</th>
            </tr>
          </thead>
          <tbody>${pending.map((gate) =>
            html`
              <tr>
                <td>${utcMinute(gate.createdAt)}</td>
                <td>${gate.clientName}</td>
                <td><a href="/approvals/${gate.id}">${gate.summary}</a></td>
              </tr>
            `
          )}</tbody>
        </table>
      `;

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
    return html`${connections}${approvals}${log}`;
  };
}
