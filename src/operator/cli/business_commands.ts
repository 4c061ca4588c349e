// Admin commands: businesses, their members and accounts, and their erasure.
import * as v from "valibot";
import { createAccounts } from "../../accounts/accounts.ts";
import type { Accounts, Business } from "../../accounts/model.ts";
import { BusinessNameSchema, EmailSchema, RoleSchema } from "../../accounts/schemas.ts";
import { grantsOfAccount } from "../../oauth/grants.ts";
import { createAuditLog, operatorEntry } from "../../workspace/domain/audit.ts";
import { deleteAccount, deleteBusiness, type ErasureDeps } from "./erasure.ts";
import { endConnections } from "./upstream_connections.ts";
import { appendOperatorLog } from "./operator_log.ts";
import { createMailService, type MailOutbox } from "../../mail/mail_outbox.ts";
import { openMailTransport } from "../../mail/transport.ts";
import { recordInvitation } from "../../workspace/domain/invitations.ts";
import { createWorkspace } from "../../workspace/domain/workspace.ts";

import {
  type AdminDeps,
  AdminError,
  command,
  IdSchema,
  revokeGrants,
  type Runnable,
} from "./command.ts";

/**
 * The outbox with the configured transport, to record a mail in a command's commit and try it
 * at once; what does not go now stays pending for the server's sender. Mail of the `log`
 * transport is printed on the command's stderr.
 */
async function _operatorMail({ config, store, now, err }: AdminDeps): Promise<MailOutbox> {
  const transport = await openMailTransport(config.mail, {
    mailLog: err,
    mailPrint: err,
    clientName: new URL(config.authUrl).hostname,
  });
  return createMailService({ store, now, transport, log: err }).mailer;
}

function _erasure({ store, now }: AdminDeps): ErasureDeps {
  return { store, accounts: createAccounts(store, now), audit: createAuditLog(store, now) };
}

/** One shape for a business: the record and its members. */
async function _describeBusiness(accounts: Accounts, business: Business) {
  return {
    business,
    members: (await accounts.listMembers(business.id)).map((m) => ({
      email: m.account.email,
      accountId: m.account.id,
      role: m.role,
    })),
  };
}

export const BUSINESS_COMMANDS: Readonly<Record<string, Runnable>> = {
  "create-business": command({
    usage: "create-business --owner EMAIL --name NAME",
    summary: "Create a business owned by EMAIL (the account is created when new).",
    options: v.strictObject({ owner: EmailSchema, name: BusinessNameSchema }),
    async run({ owner, name }, { store, now }) {
      const created = await createAccounts(store, now).createAccountWithBusiness(owner, name);
      await createAuditLog(store, now).append(operatorEntry(
        created.business.id,
        created.account.id,
        "create-business",
        `created the business with ${created.account.email} as owner`,
      ));
      return { account: created.account, business: created.business };
    },
  }),
  "add-member": command({
    usage: "add-member --business ID --email EMAIL [--role member|owner]",
    summary:
      "Add EMAIL to a business (or change its role); the account is created when new, and a new member is mailed an invitation.",
    options: v.strictObject({
      business: IdSchema,
      email: EmailSchema,
      role: v.optional(RoleSchema, "member"),
    }),
    async run({ business, email, role }, deps) {
      const { store, now, config } = deps;
      const accounts = createAccounts(store, now);
      const found = await accounts.getBusiness(business);
      if (!found) throw new AdminError(`No business with id "${business}"`);
      // The roster's own plan, as on the members page: the only owner cannot be demoted.
      const known = await accounts.findAccountByEmail(email);
      const member = known && await accounts.getMembership(known.id, business);
      const change = member ? "change_role" : "invite";
      const plan = await accounts.planMembershipChange(business, { change, email, role });
      if (!plan.ok) throw new AdminError(plan.reason);
      // A new member is told, once, in the membership's own commit; a role change mails nobody.
      const mail = change === "invite" ? await _operatorMail(deps) : null;
      const invitation = mail && recordInvitation({
        workspace: createWorkspace(store),
        mailer: mail,
        now,
        authUrl: config.authUrl,
      }, {
        businessId: business,
        businessName: found.name,
        email,
        role,
        addedBy: `the operator of Vestibule`,
      });
      if (!(await store.commit(plan.checks, [...plan.mutations, ...invitation?.mutations ?? []]))) {
        throw new AdminError("the members changed meanwhile; try again");
      }
      const account = (await accounts.findAccountByEmail(email))!;
      await createAuditLog(store, now).append(operatorEntry(
        business,
        account.id,
        "add-member",
        `made ${account.email} a member with role ${role}`,
      ));
      const sent = invitation && await mail!.dispatch(invitation.delivery);
      return {
        accountId: account.id,
        businessId: business,
        role,
        invitation: sent === null
          ? "none: already a member, only the role was set"
          : sent === "sent"
          ? `mailed to ${account.email}`
          : sent === "failed"
          ? "failed: the mail server refused it (see list-outbox)"
          : "queued: the server's outbox sends it when the mail server answers",
      };
    },
  }),
  "remove-member": command({
    usage: "remove-member --business ID --email EMAIL",
    summary:
      "Remove EMAIL from a business and revoke its grants there; the last owner stays (delete-business instead).",
    options: v.strictObject({ business: IdSchema, email: EmailSchema }),
    async run({ business, email }, deps) {
      const { store, now } = deps;
      const accounts = createAccounts(store, now);
      if (!(await accounts.getBusiness(business))) {
        throw new AdminError(`No business with id "${business}"`);
      }
      const plan = await accounts.planMembershipChange(business, {
        change: "remove",
        email,
        role: "member",
      });
      if (!plan.ok) throw new AdminError(plan.reason);
      const account = (await accounts.findAccountByEmail(email))!;
      const committed = await store.commit(plan.checks, [
        ...plan.mutations,
        createAuditLog(store, now).entry(
          operatorEntry(business, account.id, "remove-member", `removed ${account.email}`),
        ),
      ]);
      if (!committed) throw new AdminError("the members changed meanwhile; try again");
      const grants = await grantsOfAccount(store, account.id, business);
      await revokeGrants(deps, grants, "remove-member");
      const upstreams = await endConnections(deps, { accountId: account.id, businessId: business });
      return {
        removed: account.email,
        accountId: account.id,
        business,
        revokedGrants: grants.length,
        upstreamConnections: upstreams,
      };
    },
  }),
  "list-accounts": command({
    usage: "list-accounts",
    summary: "Every account, by e-mail, with its businesses and its role in each.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      const accounts = createAccounts(store, now);
      return {
        accounts: await Promise.all((await accounts.listAccounts()).map(async (account) => ({
          account,
          businesses: (await accounts.listBusinessesOf(account.id)).map(({ business, role }) => ({
            businessId: business.id,
            name: business.name,
            role,
          })),
        }))),
      };
    },
  }),
  "list-businesses": command({
    usage: "list-businesses [--email EMAIL]",
    summary: "Every business (or those of one account), by name, with its members.",
    options: v.strictObject({ email: v.optional(EmailSchema) }),
    async run({ email }, { store, now }) {
      const accounts = createAccounts(store, now);
      let businesses: Business[];
      if (email === undefined) businesses = await accounts.listBusinesses();
      else {
        const account = await accounts.findAccountByEmail(email);
        if (!account) throw new AdminError(`No account with e-mail "${email}"`);
        businesses = (await accounts.listBusinessesOf(account.id)).map((b) => b.business);
      }
      return {
        businesses: await Promise.all(businesses.map((b) => _describeBusiness(accounts, b))),
      };
    },
  }),
  "delete-account": command({
    usage: "delete-account --email EMAIL",
    summary:
      "Delete an account with its grants and sessions, and the businesses it is the only member of.",
    options: v.strictObject({ email: EmailSchema }),
    async run({ email }, deps) {
      const account = await createAccounts(deps.store, deps.now).findAccountByEmail(email);
      const upstreams = account === null
        ? null
        : await endConnections(deps, { accountId: account.id });
      const deletion = await deleteAccount(_erasure(deps), email);
      const businesses = deletion.deletedBusinesses.map((d) => d.business.id);
      await appendOperatorLog(
        deps.store,
        deps.now,
        "delete-account",
        `deleted account ${deletion.account.id}` +
          (businesses.length > 0 ? ` and its businesses ${businesses.join(", ")}` : ""),
      );
      return { ...deletion, upstreamConnections: upstreams };
    },
  }),
  "delete-business": command({
    usage: "delete-business --business ID",
    summary:
      "Delete a business with its memberships, grants, records, approvals and audit log; member accounts stay.",
    options: v.strictObject({ business: IdSchema }),
    async run({ business }, deps) {
      if (!await createAccounts(deps.store, deps.now).getBusiness(business)) {
        throw new AdminError(`No business with id "${business}"`);
      }
      const upstreams = await endConnections(deps, { businessId: business });
      const deletion = await deleteBusiness(_erasure(deps), business);
      // Its audit log went with it: the deletion is recorded where it outlives the business.
      await appendOperatorLog(
        deps.store,
        deps.now,
        "delete-business",
        `deleted business ${business}`,
      );
      return { ...deletion, upstreamConnections: upstreams };
    },
  }),
};
