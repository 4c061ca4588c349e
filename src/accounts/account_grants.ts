import { getGrant, listGrantsOfAccount, revokeGrant } from "../oauth/grants.ts";
import type { Store } from "../store/store.ts";
import type { AccountGrants } from "./routes.ts";

/** /account's view of the authorization server's grant records. */
export function createAccountGrants(store: Store): AccountGrants {
  return {
    async listForAccount(accountId) {
      return (await listGrantsOfAccount(store, accountId)).map((g) => ({
        grantId: g.grantId,
        businessId: g.businessId,
        clientId: g.clientId,
        clientName: g.clientName,
        scopes: g.scopes,
        createdAt: g.createdAt,
        lastUsedAt: g.lastUsedAt,
      }));
    },
    async revokeForAccount(accountId, grantId) {
      // Only the account's own grants: a forged grant id of someone else's revokes nothing.
      const grant = await getGrant(store, grantId);
      if (!grant || grant.accountId !== accountId) return false;
      return await revokeGrant(store, grantId);
    },
  };
}
