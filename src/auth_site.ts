import { createAccountGrants } from "./accounts/account_grants.ts";
import { accountRoutes } from "./accounts/routes.ts";
import type { AppDeps, SharedAssets } from "./app.ts";
import type { Handler } from "./http/handler.ts";
import { createRouter } from "./http/router.ts";
import { createOAuthRoutes } from "./oauth/routes.ts";
import { onboardingRoutes } from "./tools/onboarding/routes.ts";
import { stylesheetHandler } from "./ui/stylesheet.ts";
import { createWorkspaceAccountSection } from "./workspace/account_section.ts";
import { approvalRoutes } from "./workspace/approval_routes.ts";

/**
 * {auth_url}: the onboarding MCP endpoint, the human pages (sign-up, sign-in, account,
 * approvals) and the OAuth authorization server. Each part contributes its route table.
 */
export async function createAuthSite(deps: AppDeps, assets: SharedAssets): Promise<Handler> {
  return createRouter({
    "/assets/style.css": { GET: stylesheetHandler(assets.stylesheet) },
    ...accountRoutes(
      deps,
      createAccountGrants(deps.store),
      createWorkspaceAccountSection({ store: deps.store, now: deps.now, accounts: deps.accounts }),
    ),
    ...await onboardingRoutes(deps),
    ...approvalRoutes(deps),
    ...await createOAuthRoutes(deps),
  });
}
