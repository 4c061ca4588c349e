// Admin commands: the audit log of a business and the operator log.
import * as v from "valibot";
import { createAccounts } from "../../accounts/accounts.ts";
import { createAuditLog } from "../../workspace/domain/audit.ts";
import { listOperatorLog } from "./operator_log.ts";

import { AdminError, command, IdSchema, LimitSchema, type Runnable } from "./command.ts";

export const LOG_COMMANDS: Readonly<Record<string, Runnable>> = {
  "audit-log": command({
    usage: "audit-log --business ID [--limit N]",
    summary:
      "The business's audit log, newest first: agent tool calls that changed something and human decisions.",
    options: v.strictObject({ business: IdSchema, limit: LimitSchema }),
    async run({ business, limit }, { store, now }) {
      // A mistyped id is an error, not an empty log that looks like a quiet business.
      if (!(await createAccounts(store, now).getBusiness(business))) {
        throw new AdminError(`No business with id "${business}"`);
      }
      return { entries: await createAuditLog(store, now).list(business, { limit }) };
    },
  }),
  "operator-log": command({
    usage: "operator-log [--limit N]",
    summary:
      "Deletions and key rotations, newest first: what no business's audit log can keep (ids only).",
    options: v.strictObject({ limit: LimitSchema }),
    async run({ limit }, { store }) {
      return { entries: await listOperatorLog(store, limit) };
    },
  }),
};
