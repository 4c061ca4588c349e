/**
 * /account/servers?business=<id> on {auth_url}: the servers page of a business the person
 * belongs to (page.ts); anyone else reads "not found", signed-out visitors sign in and come back.
 */
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { signedInPage } from "../../accounts/signed_in.ts";
import { HttpError } from "../../http/errors.ts";
import { privatePage } from "../../http/responses.ts";
import type { MethodHandlers } from "../../http/router.ts";
import type { ServerInventory } from "./inventory.ts";
import { serversErrorPage, serversPage } from "./page.ts";

export interface ServersRoutesDeps {
  readonly accounts: Pick<Accounts, "getMembership" | "getBusiness">;
  readonly sessions: Sessions;
  readonly inventory: ServerInventory;
  /** Whether people's own connections can be kept (VESTIBULE_UPSTREAM_KEY_FILE). */
  readonly connectable: boolean;
}

const NOT_FOUND = "There is no such business among yours.";

export function createServersRoutes(deps: ServersRoutesDeps): { readonly page: MethodHandlers } {
  const { accounts, inventory } = deps;
  const show = async (request: Request, session: Session): Promise<Response> => {
    const businessId = new URL(request.url).searchParams.get("business") ?? "";
    if (businessId === "" || businessId.length > 100) {
      throw new HttpError(400, `"business" must name one of your businesses`);
    }
    const membership = await accounts.getMembership(session.account.id, businessId);
    const business = membership === null ? null : await accounts.getBusiness(businessId);
    if (membership === null || business === null) throw new HttpError(404, NOT_FOUND);
    const owner = membership.role === "owner";
    return privatePage(
      serversPage({
        email: session.account.email,
        business,
        owner,
        upstreams: await inventory.of(business.id, session.account.id, owner),
        connectable: deps.connectable,
      }),
    );
  };
  return {
    page: {
      GET: signedInPage(
        deps.sessions,
        show,
        (session, error) =>
          serversErrorPage(
            session.account.email,
            error.status === 404 ? "Servers not found" : "Request refused",
            error.message,
          ),
      ),
    },
  };
}
