/**
 * /approvals and /approvals/<gateId> on {auth_url}: a signed-in owner reads a pending
 * approval and approves or declines it (CSRF-protected, one form per gate). A member reads only
 * what their own agents asked for; anyone else sees nothing. Deciding twice changes nothing twice.
 */
import * as v from "valibot";
import { readFormWithLists } from "../../http/form.ts";
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { seeOther, signedInPage } from "../../accounts/signed_in.ts";
import { businessLabels } from "../../accounts/business_names.ts";
import { privatePage } from "../../http/responses.ts";
import type { MethodHandlers } from "../../http/router.ts";
import {
  approvalErrorPage,
  approvalPage,
  approvalsListPage,
  type GateListItem,
} from "./approvals_pages.ts";
import { type Gate, readableBy } from "../domain/gate_record.ts";
import type { Gates } from "../domain/gates.ts";
import type { DefinitionBatches } from "../domain/definition_batches.ts";
import type { Workspace } from "../domain/workspace.ts";
import type { UpstreamPin } from "../domain/upstream_pins.ts";
import { askedByWords } from "../domain/gate_words.ts";
import type { ReturnDescriber } from "../../ui/auth_pages.ts";
import { type Html, html } from "../../ui/html.ts";

const DecisionFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  decision: v.optional(v.picklist(["approve", "decline"], "decision must be approve or decline")),
});

/**
 * An upstream change's approval names the tools left out: up to 10,000 names of at most 64
 * characters, where every other form of ours is a few short fields.
 */
const MAX_BATCH_FORM_BYTES = 1024 * 1024;

const _csrfPurpose = (gateId: string) => `approval:${gateId}`;

export interface ApprovalRoutesDeps {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly gates: Gates;
  readonly definitionBatches: DefinitionBatches;
  /** The business's records: an upstream tool's pinned definition, for its description. */
  readonly workspace: Pick<Workspace, "store" | "upstreamPins">;
}

/** The approval pages of {auth_url} (auth_site.ts maps the paths). */
export interface ApprovalRoutes {
  /** /approvals: the gates of the account's businesses. */
  readonly list: MethodHandlers;
  /** /approvals/<gateId>: one gate, and an owner's decision. */
  readonly gate: MethodHandlers;
  /** Says on the sign-in page that an approval waits (nothing of it before sign-in). */
  readonly waiting: ReturnDescriber;
}

export function createApprovalRoutes(deps: ApprovalRoutesDeps): ApprovalRoutes {
  const { sessions, gates, definitionBatches } = deps;

  /** Signed in, or sent to sign in and back here. */
  const signedIn = (handler: (request: Request, session: Session) => Promise<Response>) =>
    signedInPage(
      sessions,
      handler,
      (session, error) =>
        approvalErrorPage(session.account.email, "Request refused", error.message),
    );

  return {
    waiting: (returnTo) => Promise.resolve(_waiting(returnTo)),
    list: {
      GET: signedIn(async (_request, session) => {
        const items = await _listItems(deps, session);
        return privatePage(approvalsListPage(session.account.email, items));
      }),
    },
    gate: {
      GET: signedIn(async (request, session) => {
        const found = await _visibleGate(deps, request, session);
        if (!found) return _notFound(session);
        // Only the decider's own decision is confirmed; the query alone changes nothing.
        const { gate } = found;
        const justDecided = new URL(request.url).searchParams.has("decided") &&
          gate.decidedBy === session.account.id;
        return privatePage(
          await _detail(deps, session, gate, found.role === "owner", undefined, justDecided),
        );
      }),
      POST: signedIn(async (request, session) => {
        const found = await _visibleGate(deps, request, session);
        const form = await readFormWithLists(
          request,
          ["leave_out"],
          found?.gate.action.type === "approve_tool_definitions" ? MAX_BATCH_FORM_BYTES : undefined,
        );
        const parsed = v.safeParse(DecisionFormSchema, form.fields);
        if (!found) return _notFound(session);
        const { gate } = found;
        const email = session.account.email;
        if (
          !parsed.success ||
          !await sessions.verifyCsrf(session, _csrfPurpose(gate.id), parsed.output.csrf)
        ) {
          return privatePage(
            approvalErrorPage(
              email,
              "Request refused",
              "This form has expired or did not come from this site. Open the approval again.",
            ),
            403,
          );
        }
        const decision = parsed.output.decision;
        if (decision === undefined) {
          return privatePage(
            approvalErrorPage(email, "Request refused", "Press Approve or Decline."),
            400,
          );
        }
        // An owner approving an upstream change may leave some of its tools out first.
        if (decision === "approve" && found.role === "owner" && form.lists.leave_out.length > 0) {
          await definitionBatches.leaveOut(gate, new Set(form.lists.leave_out));
        }
        const result = await gates.decide(gate.id, session.account.id, decision);
        switch (result.kind) {
          case "not_found":
            return _notFound(session);
          case "forbidden":
            return privatePage(
              approvalErrorPage(
                email,
                "Only owners decide",
                "Only an owner of this business can approve or decline it.",
              ),
              403,
            );
          case "already_decided":
            return privatePage(
              await _detail(
                deps,
                session,
                result.gate,
                true,
                `This was already ${result.gate.status}; nothing was changed again.`,
              ),
              409,
            );
          case "decided":
            return seeOther(`/approvals/${gate.id}?decided`);
        }
      }),
    },
  };
}

/**
 * The gate when the account may read it (its requester, an owner of its business); null
 * reads as "not found" to others.
 */
async function _visibleGate(deps: ApprovalRoutesDeps, request: Request, session: Session) {
  // Gate ids are UUIDs: the raw segment is compared as is (never decoded, so never throws).
  const gateId = new URL(request.url).pathname.slice("/approvals/".length);
  const gate = await deps.gates.get(gateId);
  if (!gate) return null;
  const membership = await deps.accounts.getMembership(session.account.id, gate.businessId);
  if (!membership) return null;
  const { role } = membership;
  return readableBy(gate, { accountId: session.account.id, role }) ? { gate, role } : null;
}

function _notFound(session: Session): Response {
  return privatePage(
    approvalErrorPage(
      session.account.email,
      "Approval not found",
      "There is no such approval in your businesses.",
    ),
    404,
  );
}

/** One gate's page: what it asks, who asked and decided, and an owner's form while pending. */
async function _detail(
  deps: ApprovalRoutesDeps,
  session: Session,
  gate: Gate,
  canDecide: boolean,
  notice: string | undefined,
  justDecided = false,
): Promise<string> {
  const { accounts, gates, sessions } = deps;
  const [business, requester, decider, batch, description] = await Promise.all([
    accounts.getBusiness(gate.businessId),
    accounts.getAccount(gate.requestedBy),
    gate.decidedBy ? accounts.getAccount(gate.decidedBy) : Promise.resolve(null),
    gate.action.type === "approve_tool_definitions"
      ? deps.definitionBatches.read(gate)
      : Promise.resolve(undefined),
    _toolDescription(deps.workspace, gate),
  ]);
  return approvalPage(session.account.email, {
    gate,
    businessName: business?.name ?? gate.businessId,
    requesterEmail: requester?.email ?? "a former member",
    deciderEmail: decider?.email ?? null,
    upstreamTitle: gates.upstreamTitle(gate),
    toolDescription: description,
    csrf: canDecide && gate.status === "pending"
      ? await sessions.csrfToken(session, _csrfPurpose(gate.id))
      : null,
    ...(notice === undefined ? {} : { notice }),
    justDecided,
    waiting: gates.waiting(gate),
    refusal: await gates.refusal(gate),
    result: await gates.result(gate),
    ...(batch === undefined ? {} : { batch }),
  });
}

/** What the sign-in page says waits behind /approvals…: nothing of a gate before sign-in. */
function _waiting(returnTo: URL): Html | null {
  const path = returnTo.pathname;
  if (path === "/approvals") return html`<p>Sign in to see the approvals of your businesses.</p>`;
  if (!path.startsWith("/approvals/")) return null;
  // Which business or what it asks is for its members only: shown once signed in.
  return html`<p>An approval request is waiting. Sign in to read exactly
        what approving would do, and, as an owner of its business, approve or decline it.</p>`;
}

/** An upstream tool's own description, as the business's pin holds it; null when none. */
async function _toolDescription(
  workspace: ApprovalRoutesDeps["workspace"],
  gate: Gate,
): Promise<string | null> {
  const { action } = gate;
  if (action.type !== "call_upstream") return null;
  const pin = await workspace.store.get<UpstreamPin>(
    workspace.upstreamPins.pinKey(gate.businessId, action.upstream, action.tool),
  );
  const description = pin?.value.definition.description;
  return typeof description === "string" && description !== "" ? description : null;
}

/** Who asked, in a list row's words (gate_words.ts), each account read once per list. */
async function _askedBy(
  deps: Pick<ApprovalRoutesDeps, "accounts" | "gates">,
  gate: Gate,
  emails: Map<string, Promise<string>>,
): Promise<string> {
  let email = emails.get(gate.requestedBy);
  if (email === undefined) {
    email = deps.accounts.getAccount(gate.requestedBy).then((a) => a?.email ?? "a former member");
    emails.set(gate.requestedBy, email);
  }
  return askedByWords(gate, await email, deps.gates.upstreamTitle(gate));
}

/** The gates the account reads in each of its businesses, newest first, as list rows. */
async function _listItems(
  deps: Pick<ApprovalRoutesDeps, "accounts" | "gates">,
  session: Session,
): Promise<GateListItem[]> {
  const memberships = await deps.accounts.listBusinessesOf(session.account.id);
  // Businesses of the same name are told apart (accounts/business_names.ts).
  const label = businessLabels(memberships.map((m) => m.business));
  const items: GateListItem[] = [];
  const emails = new Map<string, Promise<string>>();
  for (const { business, role } of memberships) {
    for (const gate of await deps.gates.list(business.id, { limit: 50 })) {
      if (!readableBy(gate, { accountId: session.account.id, role })) continue;
      items.push({
        gate,
        businessName: label(business),
        canDecide: role === "owner",
        headline: deps.gates.headline(gate),
        askedBy: await _askedBy(deps, gate, emails),
      });
    }
  }
  return items.sort((a, b) => b.gate.createdAt - a.gate.createdAt);
}
