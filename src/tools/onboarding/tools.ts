// The onboarding endpoint's catalogue, in listing order. No tool here grants business access;
// the accounts work adds its sign-up and sign-in-link tools to this list.
import type { AppDeps } from "../../app.ts";
import type { AnyTool } from "../../mcp/tool.ts";
import type { ConnectionGuide } from "./connection_guide.ts";
import { describeServiceTool } from "./describe_service.ts";
import { getConnectionGuideTool } from "./get_connection_guide.ts";
import { listScopesTool } from "./list_scopes.ts";
import { requestSignInLinkTool } from "./request_sign_in_link.ts";
import { requestSignUpTool } from "./request_sign_up.ts";

/** What the onboarding endpoint knows of its anonymous caller. */
export interface OnboardingCaller {
  /** Budgets the mail the account tools send, as the forms are budgeted. */
  readonly clientAddress: string;
}

export interface OnboardingToolDeps {
  readonly app: AppDeps;
  readonly guide: ConnectionGuide;
  /** For the discovery check; the global fetch in production. */
  readonly fetch: typeof fetch;
}

export function createOnboardingTools(deps: OnboardingToolDeps): AnyTool<OnboardingCaller>[] {
  return [
    getConnectionGuideTool(deps.guide, deps.fetch),
    listScopesTool(),
    describeServiceTool(deps.app.config),
    requestSignUpTool(deps.app.emailLinks),
    requestSignInLinkTool(deps.app.emailLinks),
  ];
}
