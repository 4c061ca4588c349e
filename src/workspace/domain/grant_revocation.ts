/**
 * Revoking a grant as a person does it: the grant ends and its business's audit log says who
 * ended it, in one commit, so neither stands without the other.
 */
import { endGrantMutations, type GrantRecord } from "../../oauth/grants.ts";
import type { Store } from "../../store/store.ts";
import type { AuditEntry, AuditLog } from "./audit.ts";

/** Who revoked: the account holder on /account, or an operator's command. */
export interface Revoker {
  readonly actor: AuditEntry["actor"];
  readonly action: string;
  readonly summary: string;
}

/** Ends `grant` with an audit entry naming its account, business and client. */
export async function revokeGrantWithAudit(
  store: Store,
  audit: AuditLog,
  grant: GrantRecord,
  by: Revoker,
): Promise<void> {
  await store.commit([], [
    ...endGrantMutations(grant),
    audit.entry({
      businessId: grant.businessId,
      accountId: grant.accountId,
      actor: by.actor,
      clientId: grant.clientId,
      action: by.action,
      summary: by.summary,
      gateId: null,
    }),
  ]);
}
