/**
 * /account/audit?business=<id> on {auth_url}: a business's audit log for its owners, a page at
 * a time, filtered by agent, person, action and UTC days; for a member, only the entries of their
 * own account (their agents' calls, their decisions), whatever the link asks. Anyone else reads
 * "not found", as on /approvals; signed-out visitors are sent to sign in and back.
 */
import * as v from "valibot";
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { signedInPage } from "../../accounts/signed_in.ts";
import { HttpError } from "../../http/errors.ts";
import { privatePage } from "../../http/responses.ts";
import type { MethodHandlers } from "../../http/router.ts";
import type { AuditLog } from "../domain/audit.ts";
import {
  afterUtcDay,
  AUDIT_FACET_ENTRIES,
  AUDIT_SCAN_LIMIT,
  type AuditCursor,
  auditFacets,
  type AuditFilter,
  decodeAuditCursor,
  encodeAuditCursor,
  searchAudit,
  utcDayStart,
} from "../domain/audit_search.ts";
import { auditErrorPage, type AuditFilterFields, auditPage } from "./audit_page.ts";

export interface AuditRoutesDeps {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly audit: Pick<AuditLog, "scan">;
  /** The application's name as registered or authorized; null when nothing names it any more. */
  readonly clientName: (clientId: string) => Promise<string | null>;
}

const _field = (name: string, max: number) =>
  v.optional(
    v.pipe(v.string(), v.maxLength(max, `"${name}" is longer than ${max} characters`)),
    "",
  );

// Empty fields are "not filtered": that is what the GET form sends for "All".
const AuditQuerySchema = v.object({
  business: _field("business", 100),
  agent: _field("agent", 2048),
  person: _field("person", 100),
  action: _field("action", 100),
  from: _field("from", 10),
  to: _field("to", 10),
  older: _field("older", 200),
  newer: _field("newer", 200),
});

const NOT_FOUND = "There is no such audit log among your businesses.";

function _day(name: "from" | "to", value: string): number | undefined {
  if (value === "") return undefined;
  const start = utcDayStart(value);
  if (start === null) throw new HttpError(400, `"${name}" must be a day written YYYY-MM-DD`);
  return start;
}

function _cursor(query: { older: string; newer: string }): AuditCursor | null {
  if (query.older !== "" && query.newer !== "") {
    throw new HttpError(400, `Give "older" or "newer", not both`);
  }
  const direction = query.older !== "" ? "older" : query.newer !== "" ? "newer" : null;
  if (direction === null) return null;
  const position = decodeAuditCursor(query[direction]);
  if (position === null) {
    throw new HttpError(
      400,
      `"${direction}" is not a position in this audit log; start again from the newest entries`,
    );
  }
  return { direction, position };
}

export function createAuditRoutes(deps: AuditRoutesDeps): { readonly page: MethodHandlers } {
  const { accounts, sessions, audit } = deps;

  const show = async (request: Request, session: Session): Promise<Response> => {
    const { email, id: accountId } = session.account;
    const parsed = v.safeParse(
      AuditQuerySchema,
      Object.fromEntries(new URL(request.url).searchParams),
    );
    if (!parsed.success) throw new HttpError(400, parsed.issues[0].message);
    const query = parsed.output;
    if (query.business === "") throw new HttpError(400, `"business" is required`);
    const membership = await accounts.getMembership(accountId, query.business);
    const business = await accounts.getBusiness(query.business);
    if (membership === null || business === null) throw new HttpError(404, NOT_FOUND);
    // A member reads their own account's entries only: the person filter is theirs, always.
    const own = membership.role === "owner" ? null : accountId;

    const fromMs = _day("from", query.from);
    const toStart = _day("to", query.to);
    if (fromMs !== undefined && toStart !== undefined && fromMs > toStart) {
      throw new HttpError(400, `"from" (${query.from}) is after "to" (${query.to})`);
    }
    const filter: AuditFilter = {
      ...(query.agent === "" ? {} : { clientId: query.agent }),
      ...(own !== null
        ? { accountId: own }
        : query.person === ""
        ? {}
        : { accountId: query.person }),
      ...(query.action === "" ? {} : { action: query.action }),
      ...(fromMs === undefined ? {} : { fromMs }),
      ...(toStart === undefined ? {} : { untilMs: afterUtcDay(toStart) }),
    };
    const cursor = _cursor(query);
    const [page, facets] = await Promise.all([
      searchAudit(audit, business.id, filter, cursor),
      auditFacets(audit, business.id, AUDIT_FACET_ENTRIES, own),
    ]);

    // Names for what the page shows and what the selects offer, each looked up once.
    const accountIds = new Set([
      ...facets.accountIds,
      ...page.entries.flatMap(({ entry }) => entry.accountId ?? []),
    ]);
    const clientIds = new Set([
      ...facets.clientIds,
      ...page.entries.flatMap(({ entry }) => entry.clientId ?? []),
    ]);
    const emails = new Map<string, string>();
    for (const id of accountIds) {
      emails.set(id, (await accounts.getAccount(id))?.email ?? "a former member");
    }
    const names = new Map<string, string>();
    for (const id of clientIds) names.set(id, (await deps.clientName(id)) ?? id);
    const byWords = (ids: readonly string[], words: Map<string, string>) =>
      ids.map((id) => [id, words.get(id)!] as const)
        .sort((a, b) => a[1].localeCompare(b[1]));

    const fields: AuditFilterFields = {
      agent: query.agent,
      person: own === null ? query.person : "",
      action: query.action,
      from: query.from,
      to: query.to,
    };
    return privatePage(
      auditPage({
        email,
        business,
        fields,
        agents: byWords(facets.clientIds, names),
        people: byWords(facets.accountIds, emails),
        actions: facets.actions,
        entries: page.entries,
        emailOf: (id) => emails.get(id)!,
        clientNameOf: (id) => names.get(id)!,
        olderCursor: page.older === null ? null : encodeAuditCursor(page.older),
        newerCursor: page.newer === null ? null : encodeAuditCursor(page.newer),
        stopped: page.stoppedEarly
          ? { limit: AUDIT_SCAN_LIMIT, link: cursor?.direction === "newer" ? "Newer" : "Older" }
          : null,
        filtered: Object.values(fields).some((value) => value !== ""),
        ownOnly: own !== null,
      }),
    );
  };

  return {
    page: {
      GET: signedInPage(
        sessions,
        show,
        (session, error) =>
          auditErrorPage(
            session.account.email,
            error.status === 404 ? "Audit log not found" : "Request refused",
            error.message,
          ),
      ),
    },
  };
}
