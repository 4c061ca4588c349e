// Admin commands: the audit log of a business and the operator log.
import * as v from "valibot";
import { createAccounts } from "../../accounts/accounts.ts";
import { createAuditLog } from "../../workspace/domain/audit.ts";
import { listOperatorLog } from "./operator_log.ts";
import { streamAudit } from "./audit_stream.ts";

import { AdminError, command, IdSchema, LimitSchema, type Runnable } from "./command.ts";

/** A cursor printed by `audit`: an entry's time in ms. */
const CursorSchema = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d{1,15}$/, "must be a cursor printed by audit (a whole number)"),
    v.transform(Number),
  ),
  "0",
);

export const LOG_COMMANDS: Readonly<Record<string, Runnable>> = {
  "audit": command({
    usage: "audit [--business ID] [--after CURSOR] [--follow] [--json]",
    summary:
      "Audit entries of every business (or one), oldest first, one a line; --json: JSON lines with a cursor to resume from (--after); --follow: keep printing new ones.",
    switches: ["follow", "json"],
    options: v.strictObject({
      business: v.optional(IdSchema),
      after: CursorSchema,
      follow: v.optional(v.literal("on")),
      json: v.optional(v.literal("on")),
    }),
    async run({ business, after, follow, json }, deps) {
      if (
        business !== undefined &&
        !(await createAccounts(deps.store, deps.now).getBusiness(business))
      ) {
        throw new AdminError(`No business with id "${business}"`);
      }
      await streamAudit(
        { business, after, follow: follow === "on", json: json === "on" },
        deps,
      );
      return undefined;
    },
  }),
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
