// Admin commands: mail and events waiting or failed in the outbox.
import * as v from "valibot";
import { createOutbox } from "../../outbox/outbox.ts";
import type { Delivery } from "../../outbox/delivery.ts";

import { AdminError, command, IdSchema, type Runnable } from "./command.ts";

/** What an operator sees of a delivery: the label, never the payload (it holds the link). */
function _describeDelivery(d: Delivery) {
  return {
    id: d.id,
    kind: d.kind,
    message: d.label,
    state: d.state,
    attempts: d.attempts,
    createdAt: d.createdAt,
    ...(d.state === "pending" ? { nextAttemptAt: d.nextAttemptAt } : {}),
    ...(d.lastError === null ? {} : { lastError: d.lastError }),
  };
}

export const OUTBOX_COMMANDS: Readonly<Record<string, Runnable>> = {
  "list-outbox": command({
    usage: "list-outbox [--state pending|sending|sent|failed] [--kind mail|webhook]",
    summary:
      "Mail and events waiting to be sent or that failed, oldest first (sent ones too with --state sent, kept 7 days): recipient and subject, or event type and business, never a link or a payload. An event's id is its webhook-id.",
    options: v.strictObject({
      state: v.optional(
        v.picklist(
          ["pending", "sending", "sent", "failed"],
          "must be pending, sending, sent or failed",
        ),
      ),
      kind: v.optional(v.picklist(["mail", "webhook"], "must be mail or webhook")),
    }),
    async run({ state, kind }, { store, now }) {
      const deliveries = await createOutbox({ store, now }).list(
        state === undefined ? ["pending", "sending", "failed"] : [state],
      );
      return {
        deliveries: deliveries.filter((d) => kind === undefined || d.kind === kind).map(
          _describeDelivery,
        ),
      };
    },
  }),
  "retry-delivery": command({
    usage: "retry-delivery --id ID",
    summary:
      "Send a pending or failed message or event again now (the server picks it up within 30 seconds); a failed event goes before its business's later ones.",
    options: v.strictObject({ id: IdSchema }),
    async run({ id }, { store, now }) {
      const delivery = await createOutbox({ store, now }).retryNow(id);
      if (!delivery) throw new AdminError(`No pending or failed delivery with id "${id}"`);
      return { delivery: _describeDelivery(delivery) };
    },
  }),
};
