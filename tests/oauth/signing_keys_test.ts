import assert from "node:assert/strict";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../src/store/kv_store.ts";

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
