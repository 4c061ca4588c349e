import assert from "node:assert/strict";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { LIFETIMES } from "../../src/oauth/issuer.ts";
import { manualClock } from "../store/store_contract.ts";

Deno.test("the signing key is made once and survives a restart", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const first = await openKvStore(`${dir}/data.kv`);
    const a = createSigningKeys({ store: first, now: Date.now });
    const b = createSigningKeys({ store: first, now: Date.now });
    const [ka, kb] = await Promise.all([a.current(), b.current()]);
    assert.equal(ka.kid, kb.kid, "two starts racing agree on one key");
    first.close();
    const second = await openKvStore(`${dir}/data.kv`);
    const again = await createSigningKeys({ store: second, now: Date.now }).current();
    assert.equal(again.kid, ka.kid);
    const jwks = await createSigningKeys({ store: second, now: Date.now }).jwks();
    assert.deepEqual(jwks.keys.map((k) => k.kid), [ka.kid]);
    second.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a key another replica rotated out stops verifying here once it retires", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const [here, there] = [1, 2].map(() => createSigningKeys({ store, now: clock.now }));
    const { kid } = await here!.current();
    assert.ok(await here!.publicKey(kid), "verifies, and is remembered");
    await there!.rotate();
    clock.advance(30_000);
    const next = await here!.current();
    assert.notEqual(next.kid, kid, "this replica signs with the new key within 30 s");
    assert.ok(await here!.publicKey(kid), "the retired key still verifies what it signed");
    clock.advance(LIFETIMES.accessToken + 5 * 60 * 1000);
    assert.equal(await here!.publicKey(kid), null);
  } finally {
    store.close();
  }
});
