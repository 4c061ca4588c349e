import assert from "node:assert/strict";
import { createMailService } from "../../src/mail/mail_outbox.ts";
import type { Mail } from "../../src/mail/mailer.ts";
import { DeliveryError } from "../../src/outbox/sender.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Store } from "../../src/store/store.ts";

const MAIL = { to: "a@example.com", subject: "Hi", text: "Hello\n", link: "http://x.test/" };

const stateOf = async (store: Store, id: string) =>
  (await store.get<{ state: string }>(["outbox", "delivery", id]))?.value.state;

Deno.test("a mail server that does not answer costs the request a bounded wait, not its page", async () => {
  const store = await openKvStore(":memory:");
  const hung = Promise.withResolvers<void>();
  try {
    const { mailer } = createMailService({
      store,
      now: Date.now,
      transport: { send: () => hung.promise },
      log: () => {},
      firstAttemptWaitMs: 10,
    });
    const { delivery, mutations } = mailer.record(MAIL);
    await store.commit([], mutations);
    assert.equal(await mailer.dispatch(delivery), "waiting");
    assert.equal(await stateOf(store, delivery.id), "sending");
    // The attempt goes on after the request has its answer, and completes.
    hung.resolve();
    while (await stateOf(store, delivery.id) !== "sent") {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  } finally {
    store.close();
  }
});

Deno.test("send() (decision notices) throws only when the mail server refused for good", async (t) => {
  const cases = [
    { name: "sent", error: null, throws: false },
    {
      name: "transient failure: waits in the outbox",
      error: new Error("ETIMEDOUT"),
      throws: false,
    },
    { name: "permanent refusal", error: new DeliveryError("550 no such user", true), throws: true },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const store = await openKvStore(":memory:");
      try {
        const { mailer } = createMailService({
          store,
          now: Date.now,
          transport: { send: () => c.error ? Promise.reject(c.error) : Promise.resolve() },
          log: () => {},
        });
        const sent = mailer.send(MAIL);
        if (c.throws) {
          await assert.rejects(sent, { message: "the mail server refused the message" });
        } else await sent;
      } finally {
        store.close();
      }
    });
  }
});

Deno.test("a mail recorded with HTML goes out with it; one recorded before HTML (text alone) still goes out", async () => {
  const store = await openKvStore(":memory:");
  try {
    const sent: Mail[] = [];
    const { mailer } = createMailService({
      store,
      now: Date.now,
      transport: { send: (mail) => Promise.resolve(void sent.push(mail)) },
      log: () => {},
    });
    // The previous version's payload: to, subject, text and link, no html.
    for (const mail of [{ ...MAIL, html: "<p>Hello</p>" }, MAIL]) {
      const { delivery, mutations } = mailer.record(mail);
      await store.commit([], mutations);
      assert.equal(await mailer.dispatch(delivery), "sent");
    }
    assert.deepEqual(sent, [{ ...MAIL, html: "<p>Hello</p>" }, MAIL]);
    assert.ok(!("html" in sent[1]!), "text alone, no empty html part");
  } finally {
    store.close();
  }
});
