/**
 * What /account shows of the workspace for one business: each client's agent connection test
 * in words, and for owners the approvals waiting for them. The accounts part owns the page and
 * places these in each business's card.
 */
import type { Accounts, Role } from "../../accounts/model.ts";
import { moment } from "../../ui/auth_pages.ts";
import { type Html, html } from "../../ui/html.ts";
import type { ConnectionTests } from "../domain/connection_tests.ts";
import type { Gates } from "../domain/gates.ts";
import { askedByWords } from "../domain/gate_words.ts";

/** How many of the newest gates are searched for pending ones, as /approvals does. */
const GATES_SEARCHED = 100;

export interface WorkspaceAccountParts {
  /** For owners, the approvals waiting for an owner (or that none is); null for members. */
  readonly approvals: Html | null;
  /** Each client that ran the connection test, by client id: its name and the test in words. */
  readonly connectionTests: ReadonlyMap<string, ConnectionTestView>;
}

export interface ConnectionTestView {
  readonly clientName: string;
  readonly status: Html;
}

export type WorkspaceAccountSection = (
  businessId: string,
  role: Role,
) => Promise<WorkspaceAccountParts>;

export function createWorkspaceAccountSection(deps: {
  readonly connectionTests: ConnectionTests;
  readonly gates: Pick<Gates, "list" | "headline" | "upstreamTitle">;
  readonly accounts: Pick<Accounts, "getAccount">;
  /** The application's name as stored; null when nothing names it any more. */
  readonly clientName: (clientId: string) => Promise<string | null>;
  readonly now: () => number;
}): WorkspaceAccountSection {
  const { connectionTests: tests, gates, accounts, now } = deps;

  return async (businessId, role) => {
    const connectionTests = new Map<string, ConnectionTestView>();
    for (const a of await tests.statuses(businessId)) {
      connectionTests.set(a.clientId, {
        clientName: (await deps.clientName(a.clientId)) ?? a.clientId,
        status: html`<span data-connection-status="${a.status}">${
          a.status === "verified"
            ? html`connection test passed ${moment(a.verifiedAt ?? a.createdAt)}`
            : a.expiresAt <= now()
            ? "connection test not passed (the last attempt expired)"
            : "connection test waiting for the agent"
        }</span>`,
      });
    }
    if (role !== "owner") return { approvals: null, connectionTests };

    const pending = (await gates.list(businessId, { limit: GATES_SEARCHED }))
      .filter((gate) => gate.status === "pending");
    if (pending.length === 0) {
      return { approvals: html`<p class="muted">Nothing is waiting.</p>`, connectionTests };
    }
    const emails = new Map<string, string>();
    for (const id of new Set(pending.map((gate) => gate.requestedBy))) {
      emails.set(id, (await accounts.getAccount(id))?.email ?? "a former member");
    }
    const approvals = html`
      <ul class="pending-approvals">${pending.map((gate) =>
        html`
          <li>
            <a href="/approvals/${gate.id}">${gates.headline(gate)}</a><br>
            <span class="muted">${askedByWords(
              gate,
              emails.get(gate.requestedBy)!,
              gates.upstreamTitle(gate),
            )}, ${moment(gate.createdAt)}</span>
          </li>
        `
      )}</ul>
    `;
    return { approvals, connectionTests };
  };
}
