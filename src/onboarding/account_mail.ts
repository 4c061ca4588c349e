// What request_sign_up and request_sign_in_link share: they send the same mails as the
// /sign-up and /sign-in forms, and only when the account holder authorized it (spec §1).
import * as v from "valibot";
import type { LinkRequestOutcome } from "../accounts/email_links.ts";
import { ToolError } from "../mcp/tool.ts";
import { minutesOf } from "../count_words.ts";

export const AuthorizedSchema = v.pipe(
  v.optional(v.boolean()),
  v.description(
    "true only when the account holder explicitly asked for this mail in this conversation. Without it nothing is sent.",
  ),
);

export const OutputSchema = v.object({
  status: v.literal("sent"),
  email: v.string(),
  message: v.string(),
});
export type Output = v.InferOutput<typeof OutputSchema>;

export const ANNOTATIONS = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
} as const;

export function requireAuthorization(authorized: boolean | undefined, what: string): void {
  if (authorized !== true) {
    throw new ToolError(
      `Nothing was sent: ${what} needs the account holder's authorization. Ask the account holder whether to send it, then call again with accountHolderAuthorized: true.`,
    );
  }
}

export function sentOrThrow(outcome: LinkRequestOutcome): void {
  if (!outcome.sent) {
    throw new ToolError(
      `Nothing was sent: too many sign-in or sign-up mails were requested recently. Try again in ${
        minutesOf(outcome.retryAfterSeconds)
      }.`,
    );
  }
}
