/**
 * Mail through the durable outbox, whatever the transport (`log`, `file:`, SMTP): callers
 * record a message in their own commit, beside the link it carries, then ask for it to be
 * sent at once; when the transport cannot take it now, the sender retries it later and the
 * caller's page looks the same.
 */
import type { Tracing } from "../tracing/tracing.ts";
import * as v from "valibot";
import type { Mail, Mailer } from "./mailer.ts";
import type { LogSink } from "../http/request_log.ts";
import { createOutbox, type Outbox } from "../outbox/outbox.ts";
import type { Delivery, DeliveryState } from "../outbox/delivery.ts";
import {
  createSender,
  DeliveryError,
  type DeliveryHandler,
  type Sender,
} from "../outbox/sender.ts";
import type { Key, Mutation, Store } from "../store/store.ts";

/** The outbox kind of a mail delivery. */
const MAIL_KIND = "mail";

/**
 * How long a request waits for the first attempt before it answers anyway: long enough for
 * any healthy transport, short enough that a mail server that does not answer costs the
 * person a few seconds, not a failed page.
 */
const FIRST_ATTEMPT_WAIT_MS = 5000;

const MailSchema = v.object({
  to: v.string(),
  subject: v.string(),
  text: v.string(),
  /** Optional: mail recorded before HTML alternatives goes out as text alone. */
  html: v.optional(v.string()),
  link: v.string(),
});

export interface MailOutbox extends Mailer {
  /** The mutations recording `mail`, for the caller's commit; `expiresAt`: when its link dies. */
  record(
    mail: Mail,
    options?: { readonly expiresAt?: number; readonly reportTo?: Key },
  ): { readonly delivery: Delivery; readonly mutations: Mutation[] };
  /** Tries a recorded mail once committed, waiting at most FIRST_ATTEMPT_WAIT_MS; never rejects. */
  dispatch(recorded: Delivery): Promise<DeliveryState | "missing" | "waiting">;
}

function createMailOutbox(
  deps: { store: Store; outbox: Outbox; sender: Sender; firstAttemptWaitMs: number },
): MailOutbox {
  const { store, outbox, sender } = deps;

  const record: MailOutbox["record"] = (mail, options = {}) =>
    outbox.record({
      kind: MAIL_KIND,
      payload: {
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html === undefined ? {} : { html: mail.html }),
        link: mail.link,
      },
      label: `${mail.to}: ${mail.subject}`,
      expiresAt: options.expiresAt ?? null,
      reportTo: options.reportTo ?? null,
    });

  const dispatch: MailOutbox["dispatch"] = async (recorded) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<"waiting">((resolve) => {
      timer = setTimeout(() => resolve("waiting"), deps.firstAttemptWaitMs);
    });
    try {
      return await Promise.race([sender.deliverNow(recorded), waited]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    record,
    dispatch,
    /** A mail of its own (a decision notice): recorded alone, then tried at once. */
    async send(mail) {
      const { delivery, mutations } = record(mail);
      await store.commit([], mutations);
      if (await dispatch(delivery) === "failed") {
        throw new Error("the mail server refused the message");
      }
    },
  };
}

/** The sender's handler for mail: the payload is read back from the store and checked. */
function mailDeliveryHandler(transport: Mailer): DeliveryHandler {
  return async (delivery: Delivery) => {
    const mail = v.safeParse(MailSchema, delivery.payload);
    if (!mail.success) throw new DeliveryError("the stored mail is malformed", true);
    const { html, ...text } = mail.output;
    await transport.send(html === undefined ? text : { ...text, html }, delivery.id);
  };
}

/**
 * The outbox, its sender and mail through them, over one store and one transport; the
 * sender also delivers the other kinds `handlers` name (events).
 */
export function createMailService(
  deps: {
    store: Store;
    now: () => number;
    transport: Mailer;
    log: LogSink;
    handlers?: Readonly<Record<string, DeliveryHandler>>;
    /** FIRST_ATTEMPT_WAIT_MS unless a test shortens it. */
    firstAttemptWaitMs?: number;
    /** A span per delivery attempt when tracing is on. */
    tracing?: Tracing;
  },
): { mailer: MailOutbox; sender: Sender; outbox: Outbox } {
  const { store, now } = deps;
  const outbox = createOutbox({ store, now });
  const sender = createSender({
    outbox,
    handlers: { ...deps.handlers, [MAIL_KIND]: mailDeliveryHandler(deps.transport) },
    log: deps.log,
    now,
    tracing: deps.tracing,
  });
  const firstAttemptWaitMs = deps.firstAttemptWaitMs ?? FIRST_ATTEMPT_WAIT_MS;
  return {
    mailer: createMailOutbox({ store, outbox, sender, firstAttemptWaitMs }),
    sender,
    outbox,
  };
}
