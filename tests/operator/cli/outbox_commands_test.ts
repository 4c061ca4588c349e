import { adminRunner } from "./admin_runner.ts";
import assert from "node:assert/strict";
import { createProcessServices } from "../../../src/process_services.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { importWebhookSecret } from "../../../src/events/webhook_signature.ts";
import { DeliveryError } from "../../../src/outbox/sender.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";

Deno.test("list-outbox shows waiting and failed mail without its link; retry-delivery requeues", async () => {
  const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
  const store = await openKvStore(":memory:");
  const now = Date.now;
  const run = adminRunner(store, { now });
  const { emailLinks } = createProcessServices({
    config,
    store,
    now,
    mailLog: () => {},
    transport: { send: () => Promise.reject(new DeliveryError("550 5.1.1 mailbox unknown", true)) },
  });
  try {
    await emailLinks.requestSignUp({
      email: "new@example.com",
      businessName: "New Co",
      clientAddress: "192.0.2.1",
    });
    const listed = await run("list-outbox");
    assert.equal(listed.code, 0, listed.err);
    assert.doesNotMatch(listed.out, /token|verify|https?:/, "no link in the listing");
    const [delivery, ...others] = JSON.parse(listed.out).deliveries;
    assert.equal(others.length, 0);
    assert.equal(delivery.message, "new@example.com: Confirm your sign-up for New Co on Vestibule");
    assert.equal(delivery.state, "failed");
    assert.equal(delivery.lastError, "550 5.1.1 mailbox unknown");

    const retried = await run("retry-delivery", "--id", delivery.id);
    assert.equal(retried.code, 0, retried.err);
    assert.equal(JSON.parse(retried.out).delivery.state, "pending");

    const unknown = await run("retry-delivery", "--id", "nope");
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.err,
      'vestibule admin retry-delivery: No pending or failed delivery with id "nope"',
    );
  } finally {
    store.close();
  }
});

Deno.test("list-outbox shows events (a given-up one by its type and business); retry-delivery sends it again", async () => {
  const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
  const store = await openKvStore(":memory:");
  const now = Date.now;
  const run = adminRunner(store, { now });
  const { events, sender } = createProcessServices({
    config,
    store,
    now,
    mailLog: () => {},
    webhook: {
      url: "https://hooks.example.com/in",
      key: await importWebhookSecret(`whsec_${btoa("k".repeat(32))}`),
    },
    fetch: () => Promise.resolve(new Response("gone", { status: 410 })),
  });
  try {
    const recorded = await events.record("b1", [
      { type: "trigger.disabled", data: { businessId: "b1", triggerId: "t-1" } },
    ]);
    assert.ok(await store.commit(recorded.checks, recorded.mutations));
    await sender.deliverDue();
    const listed = await run("list-outbox", "--kind", "webhook", "--state", "failed");
    assert.equal(listed.code, 0, listed.err);
    const [delivery, ...others] = JSON.parse(listed.out).deliveries;
    assert.equal(others.length, 0);
    assert.deepEqual(
      [delivery.kind, delivery.message, delivery.state, delivery.lastError],
      ["webhook", "trigger.disabled of business b1", "failed", "the endpoint answered HTTP 410"],
    );
    assert.deepEqual(JSON.parse((await run("list-outbox", "--kind", "mail")).out).deliveries, []);
    const retried = await run("retry-delivery", "--id", delivery.id);
    assert.equal(JSON.parse(retried.out).delivery.state, "pending");
    const bad = await run("list-outbox", "--state", "lost");
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--state: must be pending, sending, sent or failed/);
  } finally {
    store.close();
  }
});

Deno.test("list-outbox shows a sign-up mail whose link expired before the mail server took it: failed, with the reason", async () => {
  let time = 1_800_000_000_000;
  const now = () => time;
  const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
  const store = await openKvStore(":memory:", now);
  const run = adminRunner(store, { now });
  const { emailLinks, sender } = createProcessServices({
    config,
    store,
    now,
    mailLog: () => {},
    transport: { send: () => Promise.reject(new Error("421 4.3.2 service not available")) },
  });
  try {
    await emailLinks.requestSignUp({
      email: "new@example.com",
      businessName: "New Co",
      clientAddress: "192.0.2.1",
    });
    time += 16 * 60 * 1000;
    await sender.deliverDue();
    const listed = await run("list-outbox", "--state", "failed");
    assert.equal(listed.code, 0, listed.err);
    const [delivery, ...others] = JSON.parse(listed.out).deliveries;
    assert.equal(others.length, 0);
    assert.deepEqual(
      [delivery.message, delivery.state, delivery.lastError],
      [
        "new@example.com: Confirm your sign-up for New Co on Vestibule",
        "failed",
        "link expired before it could be sent",
      ],
    );
  } finally {
    store.close();
  }
});
