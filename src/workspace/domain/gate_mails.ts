/**
 * The mails of a gate: the owners' approval request, recorded with the gate, and the decision
 * sent to the requester afterwards (gates.ts).
 */
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import { composeMail } from "../../mail/compose.ts";
import type { Accounts } from "../../accounts/model.ts";
import type { Store } from "../../store/store.ts";
import type { Gate } from "./gate_record.ts";
import { gateHeadline, isUpstreamChange } from "./gate_words.ts";
import { prettyJson } from "../../canonical_json.ts";
import { DEFAULT_NOTIFICATION_SETTINGS, type Workspace } from "./workspace.ts";

export interface GateMailDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly workspace: Workspace;
  readonly mailer: MailOutbox;
  readonly authUrl: string;
}

/** How much of an upstream call's arguments a request mail shows (the page shows them whole). */
const MAIL_ARGUMENT_CHARS = 4_000;

/**
 * One mail per owner of the business, whatever their notification settings (those govern
 * decision notices; nothing happens here until an owner acts): what approving would do, which
 * agent asked for whom (or which upstream changed its tools), an upstream call's arguments, and
 * the approval page, which needs the owner signed in, so the link carries no secret.
 */
export async function approvalRequestMails(
  deps: GateMailDeps,
  gate: Gate,
  link: string,
  title: string | null,
): Promise<ReturnType<MailOutbox["record"]>[]> {
  const [business, requester, members] = await Promise.all([
    deps.accounts.getBusiness(gate.businessId),
    deps.accounts.getAccount(gate.requestedBy),
    deps.accounts.listMembers(gate.businessId),
  ]);
  const businessName = business?.name ?? "your business";
  const headline = gateHeadline(gate, title);
  const agent = requester
    ? `${requester.email}'s agent "${gate.clientName}"`
    : `The agent "${gate.clientName}"`;
  const { action } = gate;
  const heading = isUpstreamChange(gate)
    ? `${headline} in "${businessName}": it waits for your approval`
    : `${agent} asks for your approval in "${businessName}"`;
  const paragraphs = [
    ...(isUpstreamChange(gate)
      ? [
        "No agent asked for this: the upstream changed its tools. Until an owner approves, " +
        "agents are served the definitions approved before; a changed tool cannot be called " +
        "and a new one is not listed.",
      ]
      : []),
    _sentence(`Approving would: ${gate.summary}`),
    "Nothing happens unless an owner approves. Sign in to approve or decline.",
    ...(action.type === "call_upstream" ? ["The arguments:"] : []),
  ];
  return members.filter(({ role }) => role === "owner").map(({ account }) =>
    deps.mailer.record(composeMail({
      to: account.email,
      subject: `Approval needed in ${businessName}: ${_subjectPart(headline)}`,
      heading,
      paragraphs,
      ...(action.type === "call_upstream" ? { preformatted: _arguments(action.arguments) } : {}),
      action: { label: "Review the request", url: link },
      reason: `You get this because you are an owner of "${businessName}" on Vestibule, ` +
        `and every owner is asked.`,
      origin: deps.authUrl,
    }))
  );
}

/** The arguments as the approval page shows them, cut at MAIL_ARGUMENT_CHARS. */
function _arguments(args: Readonly<Record<string, unknown>>): string {
  const text = prettyJson(args);
  return text.length <= MAIL_ARGUMENT_CHARS
    ? text
    : `${
      text.slice(0, MAIL_ARGUMENT_CHARS)
    }\n… (${text.length} characters: the approval page shows them whole)`;
}

/** Sends the decision to the requester as their notification settings say; returns what happened. */
export async function deliverDecision(
  deps: GateMailDeps,
  gate: Gate,
  link: string,
  title: string | null,
): Promise<string> {
  const settings =
    (await deps.workspace.notificationSettings.get(gate.businessId, gate.requestedBy))
      ?.value ?? DEFAULT_NOTIFICATION_SETTINGS;
  if (!settings.approvalEmails) {
    return "not sent: approval e-mails are off in the requester's settings";
  }
  const account = await deps.accounts.getAccount(gate.requestedBy);
  if (!account) return "not sent: the requesting account no longer exists";
  const business = await deps.accounts.getBusiness(gate.businessId);
  const businessName = business?.name ?? "your business";
  const verdict = gate.status === "approved" ? "Approved" : "Declined";
  const { delivery, mutations } = deps.mailer.record(composeMail({
    to: account.email,
    subject: `${gate.failed ? "Approved, but failed" : verdict} in ${businessName}: ${
      _subjectPart(gateHeadline(gate, title))
    }`,
    heading: isUpstreamChange(gate)
      ? `An owner ${verdict.toLowerCase()} a change in "${businessName}": ` +
        gateHeadline(gate, title)
      : `An owner ${verdict.toLowerCase()} what your agent "${gate.clientName}" asked ` +
        `for in "${businessName}"`,
    paragraphs: [
      _sentence(`${isUpstreamChange(gate) ? "Approving would" : "The request"}: ${gate.summary}`),
      gate.status === "declined"
        ? "Nothing was changed."
        : gate.applied
        ? _sentence(`Done: ${gate.outcome ?? gate.summary}`)
        : _sentence(gate.outcome ?? "Approved, but not applied"),
    ],
    action: { label: "See the approval", url: link },
    reason: (isUpstreamChange(gate)
      ? `You get this because your agent met this change in "${businessName}" and `
      : `You get this because your agent asked for this approval in "${businessName}" and `) +
      `your approval e-mails are on (the notification settings of your agents' tools).`,
    origin: deps.authUrl,
  }));
  await deps.store.commit([], mutations);
  const state = await deps.mailer.dispatch(delivery);
  if (state === "sent") return `e-mailed to ${account.email}`;
  if (state === "failed") {
    return "failed: the mail could not be sent; retry with redeliver_decision";
  }
  // Recorded but not yet accepted by the mail server: the outbox keeps retrying it.
  return `queued for ${account.email}: not sent yet, the outbox retries it`;
}

/** A summary short enough for a subject line (the mail's first lines carry it whole). */
function _subjectPart(summary: string): string {
  return summary.length <= 90 ? summary : `${summary.slice(0, 89).trimEnd()}…`;
}

/** Text that ends as a sentence does, whether or not it came with its full stop. */
const _sentence = (text: string) => /[.!?]$/.test(text) ? text : `${text}.`;
