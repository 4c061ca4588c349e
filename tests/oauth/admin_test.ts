import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config.ts";
import { createAccessTokenVerifier } from "../../src/oauth/access_token.ts";
import {
  listClients,
  listGrantsOfAccount,
  revokeClient,
  revokeGrant,
  rotateSigningKey,
} from "../../src/oauth/admin.ts";
import { createClients } from "../../src/oauth/clients.ts";
import { issuerOf } from "../../src/oauth/issuer.ts";
import { createMetadataDocuments } from "../../src/oauth/cimd.ts";
import { issueGrant } from "../../src/oauth/grants.ts";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "../store/store_contract.ts";

const config = resolveConfig({
  VESTIBULE_AUTH_URL: "https://auth.example.com",
  VESTIBULE_API_URL: "https://api.example.com",
  VESTIBULE_BASE_URL: "https://www.example.com",
});

Deno.test("admin: clients, grants, revocation and key rotation", async (t) => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  const deps = { config, store, now: clock.now };
  const verify = createAccessTokenVerifier(deps);
  try {
    const clients = createClients({
      store,
      now: clock.now,
      documents: createMetadataDocuments({ config, now: clock.now }),
      issuer: issuerOf(config),
    });
    const { client } = await clients.register({
      clientName: "Agent",
      redirectUris: ["https://a.example/cb"],
      grantTypes: ["authorization_code"],
      tokenEndpointAuthMethod: "none",
      scope: null,
      applicationType: "web",
    });
    const a = await issueGrant(deps, {
      accountId: "acc",
      businessId: "biz",
      clientId: client.clientId,
      clientName: "Agent",
      scopes: ["app.access"],
    });
    const b = await issueGrant(deps, {
      accountId: "acc",
      businessId: "biz2",
      clientId: "https://doc.example/client.json",
      clientName: "Doc",
      scopes: ["app.access"],
    });

    await t.step("lists registered and document clients with their grant counts", async () => {
      const list = await listClients(store);
      assert.deepEqual(
        list.map((c) => [c.clientName, c.registration, c.grants]).sort(),
        [["Agent", "dynamic", 1], ["Doc", "metadata_document", 1]],
      );
      const grants = await listGrantsOfAccount(store, "acc", "biz2");
      assert.deepEqual(grants.map((g) => g.grantId), [b.grantId]);
    });
    await t.step("rotation keeps the old key published until its tokens expire", async () => {
      const before = (await createSigningKeys(deps).jwks()).keys.length;
      const rotated = await rotateSigningKey(store, clock.now);
      assert.notEqual(rotated.retired, null);
      assert.equal((await createSigningKeys(deps).jwks()).keys.length, before + 1);
      assert.equal((await verify(b.tokens.access_token)).ok, true);
      const fresh = await issueGrant(deps, {
        accountId: "acc",
        businessId: "biz",
        clientId: "x",
        scopes: ["app.access"],
      });
      clock.advance(59 * 60 * 1000);
      assert.equal((await verify(b.tokens.access_token)).ok, true, "still verifiable at 59 min");
      assert.equal((await createSigningKeys(deps).jwks()).keys.length, before + 1);
      clock.advance(6 * 60 * 1000 + 1);
      assert.equal((await createSigningKeys(deps).jwks()).keys.length, before);
      assert.equal((await verify(b.tokens.access_token)).ok, false);
      assert.equal((await verify(fresh.tokens.access_token)).ok, false, "expired by now too");
    });
    await t.step("revoking a client ends its grants and forgets its registration", async () => {
      assert.equal(await revokeClient(store, client.clientId), 1);
      assert.equal((await clients.lookup(client.clientId)).ok, false);
      assert.equal(await revokeClient(store, client.clientId), null);
      assert.equal(await revokeGrant(store, a.grantId), false);
      assert.equal(await revokeGrant(store, b.grantId), true);
    });
  } finally {
    store.close();
  }
});
