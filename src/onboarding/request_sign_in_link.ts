import * as v from "valibot";
import type { EmailLinks } from "../accounts/email_links.ts";
import { EmailSchema } from "../accounts/schemas.ts";
import type { OnboardingCaller } from "./caller.ts";
import { defineTool } from "../mcp/tool.ts";
import {
  ANNOTATIONS,
  AuthorizedSchema,
  type Output,
  OutputSchema,
  requireAuthorization,
  sentOrThrow,
} from "./account_mail.ts";

export function requestSignInLinkTool(emailLinks: EmailLinks) {
  return defineTool<
    OnboardingCaller,
    { email: string; accountHolderAuthorized?: boolean | undefined },
    Output
  >(
    {
      name: "request_sign_in_link",
      title: "Request a sign-in e-mail",
      description:
        "Sends the account holder a one-time sign-in link (valid 15 minutes, confirmed in a browser). Only with the account holder's explicit authorization. The answer is the same whether or not the address has an account.",
      input: v.strictObject({
        email: v.pipe(EmailSchema, v.description("The account holder's e-mail address.")),
        accountHolderAuthorized: AuthorizedSchema,
      }),
      output: OutputSchema,
      annotations: ANNOTATIONS,
      async handler({ email, accountHolderAuthorized }, context) {
        requireAuthorization(accountHolderAuthorized, "a sign-in e-mail");
        sentOrThrow(
          await emailLinks.requestSignIn({ email, clientAddress: context.auth.clientAddress }),
        );
        return {
          status: "sent",
          email,
          message:
            `A message is on its way to ${email}. The account holder follows it within 15 minutes to sign in in the browser.`,
        };
      },
      text: (output) => output.message,
    },
  );
}
