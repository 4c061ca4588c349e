// The onboarding endpoint's catalogue, in listing order. No tool here grants business access.
import type { EmailLinks } from "../accounts/email_links.ts";
import type { Config } from "../config/config.ts";
import type { AnyTool } from "../mcp/tool.ts";
import type { ScopeCatalogue } from "../oauth/scopes.ts";
import type { OnboardingCaller } from "./caller.ts";
import type { ConnectionGuide } from "./connection_guide.ts";
import { describeServiceTool } from "./describe_service.ts";
import { getConnectionGuideTool } from "./get_connection_guide.ts";
import { listScopesTool } from "./list_scopes.ts";
import { requestSignInLinkTool } from "./request_sign_in_link.ts";
import { requestSignUpTool } from "./request_sign_up.ts";

export interface OnboardingToolDeps {
  readonly config: Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;
  /** The sign-up and sign-in mail the forms send too (one rate limit). */
  readonly emailLinks: EmailLinks;
  readonly guide: ConnectionGuide;
  /** For the discovery check; the global fetch in production. */
  readonly fetch: typeof fetch;
  /** The scopes list_scopes describes. */
  readonly scopes: ScopeCatalogue;
}

export function createOnboardingTools(deps: OnboardingToolDeps): AnyTool<OnboardingCaller>[] {
  return [
    getConnectionGuideTool(deps.guide, deps.fetch),
    listScopesTool(deps.scopes),
    describeServiceTool(deps.config),
    requestSignUpTool(deps.emailLinks),
    requestSignInLinkTool(deps.emailLinks),
  ];
}
