/**
 * Adding someone to a business tells them, once: the invitation record (its `delivery` follows
 * the mail through the outbox, as `list_members` shows) and its mail, as mutations for the same
 * commit as the membership, so nobody is added without being told nor told without being added.
 * Every path that adds a member comes here: an approved `change_access` and `admin add-member`.
 */
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Mail } from "../../mail/mailer.ts";
import { composeMail } from "../../mail/compose.ts";
import type { Delivery } from "../../outbox/delivery.ts";
import type { Mutation } from "../../store/store.ts";
import type { Workspace } from "./workspace.ts";

export type MemberRole = "owner" | "member";

export interface NewMember {
  readonly businessId: string;
  readonly businessName: string;
  readonly email: string;
  readonly role: MemberRole;
  /** Who added them, as a phrase: "ann@example.com, an owner of Acme", "the operator of …". */
  readonly addedBy: string;
}

export const roleWithArticle = (role: MemberRole) => role === "owner" ? "an owner" : "a member";

export function recordInvitation(
  deps: {
    readonly workspace: Pick<Workspace, "invitations">;
    readonly mailer: Pick<MailOutbox, "record">;
    readonly now: () => number;
    readonly authUrl: string;
  },
  member: NewMember,
): { readonly delivery: Delivery; readonly mutations: Mutation[] } {
  const id = crypto.randomUUID();
  const key = deps.workspace.invitations.key(member.businessId, id);
  const mail = deps.mailer.record(invitationMail(member, deps.authUrl), { reportTo: key });
  return {
    delivery: mail.delivery,
    mutations: [
      {
        type: "set",
        key,
        value: {
          id,
          email: member.email,
          role: member.role,
          delivery: "pending",
          sentAt: deps.now(),
        },
      },
      ...mail.mutations,
    ],
  };
}

/** The invitee signs in with their address: membership is already theirs, nothing to accept. */
export function invitationMail(member: NewMember, authUrl: string): Mail {
  const business = `"${member.businessName}"`;
  const as = roleWithArticle(member.role);
  return composeMail({
    to: member.email,
    subject: `You were added to ${member.businessName} on Vestibule`,
    heading: `You were added to ${business} as ${as}`,
    paragraphs: [
      `${_capitalised(member.addedBy)} added ${member.email} to the business ${business} on ` +
      `Vestibule, as ${as}. You can sign in to it and let agents work for you there` +
      (member.role === "owner" ? "; as an owner, you also approve what they ask for." : "."),
      `To sign in, open the sign-in page and enter this address; we will mail you a link. ` +
      `This invitation does not expire.`,
    ],
    action: { label: "Sign in to Vestibule", url: `${authUrl}/sign-in` },
    reason: `You get this because ${member.addedBy} added this address to ${business} at ` +
      `${authUrl}. If you did not expect it, ignore this mail or ask the business's owners to ` +
      `remove you.`,
    origin: authUrl,
  });
}

const _capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
