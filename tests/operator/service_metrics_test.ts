import assert from "node:assert/strict";
import { createOutbox } from "../../src/outbox/outbox.ts";
import { createServiceMetrics } from "../../src/operator/service_metrics.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Key, Store } from "../../src/store/store.ts";

const ORIGINS = { base: "http://a.test", auth: "http://b.test", api: "http://c.test" };

/** The store, and how many delivery records its listings yielded. */
function countingDeliveries(store: Store) {
  let read = 0;
  const counted: Store = {
    ...store,
    get: (key) => store.get(key),
    set: (key, value, options) => store.set(key, value, options),
    delete: (key) => store.delete(key),
    commit: (checks, mutations) => store.commit(checks, mutations),
    snapshot: (prefix) => store.snapshot(prefix),
    close: () => store.close(),
    async *list<T>(prefix: Key, options?: { readonly limit?: number }) {
      for await (const entry of store.list<T>(prefix, options)) {
        if (entry.key[1] === "delivery") read++;
        yield entry;
      }
    },
  };
  return { store: counted, read: () => read };
}

const sample = (text: string, state: string) =>
  Number(new RegExp(`vestibule_outbox_messages\\{state="${state}"\\} (\\d+)`).exec(text)?.[1]);

Deno.test("the outbox gauge counts a backlog from the due index: scrapes read no delivery, finished ones are recounted once a minute", async () => {
  let time = 1_800_000_000_000;
  const now = () => time;
  const kv = await openKvStore(":memory:", now);
  try {
    const counting = countingDeliveries(kv);
    const outbox = createOutbox({ store: kv, now });
    const queue = async (name: string, count: number) => {
      const recording = await outbox.recordInQueue(
        name,
        Array.from({ length: count }, () => ({ kind: "webhook", payload: {}, label: "e" })),
      );
      assert.ok(await kv.commit(recording.checks, recording.mutations));
      return recording.deliveries;
    };
    const [done] = await queue("events/b0", 1);
    await outbox.finish((await outbox.claim(done!.id))!, { kind: "sent" });
    await queue("events/b1", 200);
    await queue("events/b2", 200);
    const mail = outbox.record({ kind: "mail", payload: {}, label: "m" });
    assert.ok(await kv.commit([], mail.mutations));
    assert.ok(await outbox.claim((await outbox.due("queue", 1))[0]!.id), "one event sending");
    const metrics = createServiceMetrics({ store: counting.store, now, origins: ORIGINS });
    const scrape = await metrics.render();
    assert.equal(sample(scrape, "sending"), 2, "the mail and the claimed event");
    assert.equal(sample(scrape, "pending"), 399);
    assert.equal(sample(scrape, "sent"), 1);
    const readFirst = counting.read();
    time += 30_000;
    await queue("events/b3", 5);
    const again = await metrics.render();
    assert.equal(sample(again, "pending"), 404);
    assert.equal(sample(again, "sent"), 1);
    assert.equal(counting.read(), readFirst, "a scrape within the minute reads no delivery");
  } finally {
    kv.close();
  }
});
