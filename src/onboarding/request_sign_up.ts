import * as v from "valibot";
import type { EmailLinks } from "../accounts/email_links.ts";
import { BusinessNameSchema, EmailSchema } from "../accounts/schemas.ts";
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

export function requestSignUpTool(emailLinks: EmailLinks) {
  return defineTool<
    OnboardingCaller,
    { email: string; businessName: string; accountHolderAuthorized?: boolean | undefined },
    Output
  >({
    name: "request_sign_up",
    title: "Request a sign-up e-mail",
    description:
      "Sends the account holder a link that creates their Vestibule account (or adds the business to their existing account) once they confirm it in a browser. Only with the account holder's explicit authorization; the agent never completes the sign-up itself.",
    input: v.strictObject({
      email: v.pipe(EmailSchema, v.description("The account holder's e-mail address.")),
      businessName: v.pipe(BusinessNameSchema, v.description("The business to create.")),
      accountHolderAuthorized: AuthorizedSchema,
    }),
    output: OutputSchema,
    annotations: ANNOTATIONS,
    async handler({ email, businessName, accountHolderAuthorized }, context) {
      requireAuthorization(accountHolderAuthorized, "a sign-up e-mail");
      sentOrThrow(
        await emailLinks.requestSignUp({
          email,
          businessName,
          clientAddress: context.auth.clientAddress,
        }),
      );
      return {
        status: "sent",
        email,
        message:
          `A message is on its way to ${email}. The account holder opens its link within 15 minutes and confirms in the browser; then they can sign in and approve access for this client.`,
      };
    },
    text: (output) => output.message,
  });
}
