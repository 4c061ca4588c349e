// Admin commands: clients, grants and the signing key: who may act for a business, and ending it.
import * as v from "valibot";
import { createAccounts } from "../../accounts/accounts.ts";
import { EmailSchema } from "../../accounts/schemas.ts";
import { UNLIMITED } from "../../http/rate_limiter.ts";
import { createMetadataDocuments } from "../../oauth/cimd.ts";
import { type Clients, createClients } from "../../oauth/clients.ts";
import { issuerOf } from "../../oauth/issuer.ts";
import {
  getGrant,
  type GrantRecord,
  grantsOfAccount,
  listGrantsOfClient,
} from "../../oauth/grants.ts";
import { createSigningKeys } from "../../oauth/signing_keys.ts";
import { appendOperatorLog } from "./operator_log.ts";

import {
  type AdminDeps,
  AdminError,
  command,
  IdSchema,
  revokeGrants,
  type Runnable,
} from "./command.ts";
import { SPEC_SCOPES } from "../../oauth/scopes.ts";

function _clients({ config, store, now }: AdminDeps): Clients {
  return createClients({
    store,
    now,
    documents: createMetadataDocuments({ config, now, budget: UNLIMITED, scopes: SPEC_SCOPES }),
    issuer: issuerOf(config),
  });
}

/** One shape for a grant, whichever way it was found. */
function _describeGrant(grant: GrantRecord) {
  return {
    grantId: grant.id,
    accountId: grant.accountId,
    businessId: grant.businessId,
    clientId: grant.clientId,
    clientName: grant.clientName,
    scopes: grant.scopes,
    resource: grant.resource,
    offline: grant.offline,
    createdAt: grant.createdAt,
  };
}

export const ACCESS_COMMANDS: Readonly<Record<string, Runnable>> = {
  "list-clients": command({
    usage: "list-clients",
    summary: "Dynamically registered clients, with how many live grants each has.",
    options: v.strictObject({}),
    async run(_options, deps) {
      const clients = await _clients(deps).listRegistered();
      return {
        clients: await Promise.all(clients.map(async ({ secretHash, ...client }) => ({
          ...client,
          confidential: secretHash !== null,
          liveGrants: (await listGrantsOfClient(deps.store, client.clientId)).length,
        }))),
      };
    },
  }),
  "list-grants": command({
    usage: "list-grants (--client CLIENT_ID | --email EMAIL)",
    summary: "Live grants of a client, or of an account, newest first.",
    options: v.pipe(
      v.strictObject({ client: v.optional(IdSchema), email: v.optional(EmailSchema) }),
      v.check(
        (o) => (o.client === undefined) !== (o.email === undefined),
        "give either --client or --email, not both",
      ),
    ),
    async run({ client, email }, { store, now }) {
      let grants: GrantRecord[];
      if (client !== undefined) grants = await listGrantsOfClient(store, client);
      else {
        const account = await createAccounts(store, now).findAccountByEmail(email!);
        if (!account) throw new AdminError(`No account with e-mail "${email}"`);
        grants = await grantsOfAccount(store, account.id);
      }
      grants.sort((a, b) => b.createdAt - a.createdAt);
      return { grants: grants.map(_describeGrant) };
    },
  }),
  "revoke-grant": command({
    usage: "revoke-grant --grant GRANT_ID",
    summary: "Revoke one grant: its access and refresh tokens stop working.",
    options: v.strictObject({ grant: IdSchema }),
    async run({ grant }, deps) {
      const found = await getGrant(deps.store, grant);
      if (!found) throw new AdminError(`No live grant with id "${grant}"`);
      await revokeGrants(deps, [found], "revoke-grant");
      return { revoked: grant, clientId: found.clientId, accountId: found.accountId };
    },
  }),
  "revoke-client": command({
    usage: "revoke-client --client CLIENT_ID",
    summary: "Revoke every grant of a client and delete its registration.",
    options: v.strictObject({ client: IdSchema }),
    async run({ client }, deps) {
      const grants = await listGrantsOfClient(deps.store, client);
      await revokeGrants(deps, grants, "revoke-client");
      const registrationDeleted = await _clients(deps).deleteRegistered(client);
      if (grants.length === 0 && !registrationDeleted) {
        throw new AdminError(`No registration or live grant for client "${client}"`);
      }
      return { clientId: client, revokedGrants: grants.length, registrationDeleted };
    },
  }),
  "rotate-signing-key": command({
    usage: "rotate-signing-key",
    summary:
      "Sign with a new key from now on; the old one stays in the JWKS until its tokens have expired.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      const rotated = await createSigningKeys({ store, now }).rotate();
      await appendOperatorLog(store, now, "rotate-signing-key", `new signing key ${rotated.kid}`);
      return rotated;
    },
  }),
};
