import type { Config } from "../config/config.ts";
import type { Limiters } from "../http/rate_limits.ts";
import type { AtomicCheck, Entry, Mutation, Store } from "../store/store.ts";
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import type { MailOutbox } from "../mail/mail_outbox.ts";
import type { Mail } from "../mail/mailer.ts";
import { composeMail } from "../mail/compose.ts";
import type { Accounts } from "./model.ts";
import { hashSecret, randomSecret } from "../secrets.ts";

/** How long a sign-in or sign-up link can be used. */
export const LINK_LIFETIME_MS = 15 * 60 * 1000;

/** What a link stands for; stored under the SHA-256 of its token, never the token. */
export type LinkRecord =
  | { readonly kind: "sign_in"; readonly email: string; readonly returnTo: string }
  | {
    readonly kind: "sign_up";
    readonly email: string;
    readonly businessName: string;
    readonly returnTo: string;
  };

/**
 * A link being used: its record, and for a sign-up whether a later sign-up link for the same
 * address and business name was sent since (only the newest one may create the business).
 */
export interface LinkUse {
  readonly record: LinkRecord;
  readonly superseded: boolean;
}

export type LinkRequestOutcome =
  | { readonly sent: true }
  | { readonly sent: false; readonly retryAfterSeconds: number };

export interface EmailLinks {
  /** Mails a link that, once confirmed, creates the account (if new) and the business. */
  requestSignUp(
    request: { email: string; businessName: string; clientAddress: string; returnTo?: string },
  ): Promise<LinkRequestOutcome>;
  /**
   * Mails a one-time sign-in link, or, for an address without an account, a mail saying so
   * with the sign-up address: the caller sees the same outcome either way.
   */
  requestSignIn(
    request: { email: string; clientAddress: string; returnTo?: string },
  ): Promise<LinkRequestOutcome>;
  /** The live record of a link, without using it (the confirmation page). */
  peek(token: string): Promise<LinkUse | null>;
  /**
   * Uses the link: at most one caller ever gets the record, however many race; whether it was
   * superseded is read in the same commit.
   */
  consume(token: string): Promise<LinkUse | null>;
}

const _key = (digest: string) => ["accounts", "email_link", digest];
/** The digest of the newest sign-up link for an address and a business name; lives as long. */
const _newestKey = (email: string, businessName: string) => [
  "accounts",
  "sign_up_newest",
  email.toLowerCase(),
  businessName.trim().replace(/\s+/g, " ").toLowerCase(),
];

export function createEmailLinks(
  deps: {
    config: Pick<Config, "authUrl">;
    store: Store;
    now: () => number;
    mailer: MailOutbox;
    accounts: Accounts;
    limiters: Limiters;
  },
): EmailLinks {
  const { config, store, now, mailer, accounts } = deps;
  // DESIGN.md: sign-in and sign-up mail per client address, and per e-mail; shared by every
  // replica, since each mail reaches a person.
  const perAddress = deps.limiters.shared("mail-address");
  const perEmail = deps.limiters.shared("mail");

  const allow = async (email: string, clientAddress: string): Promise<LinkRequestOutcome> => {
    for (const take of [() => perAddress.take(clientAddress), () => perEmail.take(email)]) {
      const decision = await take();
      if (!decision.allowed) return { sent: false, retryAfterSeconds: decision.retryAfterSeconds };
    }
    return { sent: true };
  };

  /** The token travels in the query: the request log records paths only. */
  const newLink = () => {
    const token = randomSecret();
    return { token, link: `${config.authUrl}/sign-in/verify?token=${token}` };
  };

  /**
   * Stores the link's record and the mail in one commit (neither exists without the other),
   * then asks for the mail to go out at once. Once the link has expired the mail is not sent:
   * the outbox records it failed. The person's page is the same whether it went out or waits for
   * a retry.
   */
  const issue = async (token: string, record: LinkRecord, mail: Mail): Promise<void> => {
    const expiresAt = now() + LINK_LIFETIME_MS;
    const { delivery, mutations } = mailer.record(mail, { expiresAt });
    const digest = await hashSecret(token);
    const newest: Mutation[] = record.kind === "sign_up"
      ? [{
        type: "set",
        key: _newestKey(record.email, record.businessName),
        value: digest,
        expireIn: LINK_LIFETIME_MS,
      }]
      : [];
    await store.commit([], [
      { type: "set", key: _key(digest), value: record, expireIn: LINK_LIFETIME_MS },
      ...newest,
      ...mutations,
    ]);
    await mailer.dispatch(delivery);
  };

  const lookup = async (token: string) =>
    /^[A-Za-z0-9_-]{43}$/.test(token)
      ? await store.get<LinkRecord>(_key(await hashSecret(token)))
      : null;

  /** The newest sign-up link's entry for a sign-up record (null for sign-in links). */
  const newestOf = (record: LinkRecord) =>
    record.kind === "sign_up"
      ? store.get<string>(_newestKey(record.email, record.businessName))
      : Promise.resolve(null);

  // A sign-up link whose newest entry expired names no later link: it is not superseded.
  const supersededBy = (digest: string, newest: Entry<string> | null) =>
    newest !== null && newest.value !== digest;

  return {
    async requestSignUp({ email, businessName, clientAddress, returnTo = "/account" }) {
      const outcome = await allow(email, clientAddress);
      if (!outcome.sent) return outcome;
      const { token, link } = newLink();
      await issue(
        token,
        { kind: "sign_up", email, businessName, returnTo },
        _signUpMail(email, businessName, link, config.authUrl),
      );
      return outcome;
    },

    async requestSignIn({ email, clientAddress, returnTo = "/account" }) {
      const outcome = await allow(email, clientAddress);
      if (!outcome.sent) return outcome;
      // The same work either way (one read, one link record, one mail), so neither the page
      // nor the time it takes tells whether the address has an account. The record of an
      // address without one is never mailed and expires unused.
      const known = await accounts.hasAccount(email);
      const { token, link } = newLink();
      await issue(
        token,
        { kind: "sign_in", email, returnTo },
        known ? _signInMail(email, link, config.authUrl) : _noAccountMail(email, config.authUrl),
      );
      return outcome;
    },

    async peek(token) {
      const entry = await lookup(token);
      if (!entry) return null;
      const newest = await newestOf(entry.value);
      return { record: entry.value, superseded: supersededBy(String(entry.key.at(-1)), newest) };
    },

    async consume(token) {
      // Read again when a later sign-up link was sent meanwhile; gone means used.
      return await retryCommit(async () => {
        const entry = await lookup(token);
        if (!entry) return null;
        const newest = await newestOf(entry.value);
        const checks: AtomicCheck[] = [{ key: entry.key, version: entry.version }];
        if (entry.value.kind === "sign_up") {
          const { email, businessName } = entry.value;
          checks.push({ key: _newestKey(email, businessName), version: newest?.version ?? null });
        }
        if (!await store.commit(checks, [{ type: "delete", key: entry.key }])) return RETRY;
        return { record: entry.value, superseded: supersededBy(String(entry.key.at(-1)), newest) };
      });
    },
  };
}

/** Why a sign-in or sign-up mail reached this address, and what to do if nobody here asked. */
const _askedReason = (what: string, authUrl: string) =>
  `You get this because someone asked to ${what} with this address at ${authUrl}. ` +
  `If it wasn't you, ignore this mail.`;

function _signUpMail(email: string, businessName: string, link: string, authUrl: string): Mail {
  return composeMail({
    to: email,
    subject: `Confirm your sign-up for ${businessName} on Vestibule`,
    heading: `Confirm to create "${businessName}" on Vestibule`,
    paragraphs: [
      `Someone asked to create the business "${businessName}" on Vestibule for ${email}, ` +
      `with this address as its owner.`,
      `To confirm, open this link within 15 minutes and press the button. It works once; ` +
      `nothing is created without it.`,
    ],
    action: { label: "Confirm the sign-up", url: link },
    reason: _askedReason("sign up on Vestibule", authUrl),
    origin: authUrl,
  });
}

function _signInMail(email: string, link: string, authUrl: string): Mail {
  return composeMail({
    to: email,
    subject: "Sign in to Vestibule",
    heading: `Your sign-in link for ${email}`,
    paragraphs: [
      `Someone asked to sign in to Vestibule as ${email}.`,
      `To sign in, open this link within 15 minutes and press the button. It works once.`,
    ],
    action: { label: "Sign in", url: link },
    reason: _askedReason("sign in to Vestibule", authUrl),
    origin: authUrl,
  });
}

/** Same subject as a sign-in mail; links to sign-up, with no sign-in token. */
function _noAccountMail(email: string, authUrl: string): Mail {
  return composeMail({
    to: email,
    subject: "Sign in to Vestibule",
    heading: `${email} has no Vestibule account yet`,
    paragraphs: [
      `Someone asked to sign in to Vestibule as ${email}, but this address has no account. ` +
      `To create one with a business of your own, sign up.`,
    ],
    action: { label: "Sign up", url: `${authUrl}/sign-up` },
    reason: _askedReason("sign in to Vestibule", authUrl),
    origin: authUrl,
  });
}
