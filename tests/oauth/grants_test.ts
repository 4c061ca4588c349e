import assert from "node:assert/strict";
import {
  getGrant,
  grantMutations,
  type GrantRecord,
  listGrantsOfAccount,
} from "../../src/oauth/grants.ts";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { type GrantInput, prepareGrant } from "../../src/oauth/token_issuance.ts";
import { createTokenSigner } from "../../src/oauth/tokens.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { config } from "./fixtures.ts";
import { issueGrant } from "../../testkit/issue_grant.ts";

const now = () => Date.UTC(2026, 0, 1);

const input = (scopes: string[], clientId = "client1"): GrantInput => ({
  accountId: "acc1",
  businessId: "biz1",
  clientId,
  clientName: clientId,
  scopes,
  resource: config.apiUrl,
  refreshable: true,
  authTime: now(),
});

async function liveGrantIds(store: Awaited<ReturnType<typeof openKvStore>>) {
  return (await listGrantsOfAccount(store, "acc1")).map((g) => g.grantId).sort();
}

Deno.test("a new grant replaces the account's grant to the same client in the business", async () => {
  const store = await openKvStore(":memory:", now);
  try {
    const issue = (scopes: string[], clientId?: string, businessId = "biz1") =>
      issueGrant({ config, store, now }, {
        accountId: "acc1",
        businessId,
        clientId: clientId ?? "client1",
        scopes,
      });
    const first = await issue(["app.access"]);
    const elsewhere = await issue(["app.access"], "client1", "biz2");
    const other = await issue(["app.access"], "client2");
    const second = await issue(["app.access", "members.read"]);
    assert.equal(await getGrant(store, first.grantId), null);
    assert.deepEqual((await getGrant(store, second.grantId))?.scopes, [
      "app.access",
      "members.read",
    ]);
    assert.deepEqual(
      await liveGrantIds(store),
      [second.grantId, elsewhere.grantId, other.grantId].sort(),
    );
  } finally {
    store.close();
  }
});

Deno.test("grants stored before the one-grant rule are replaced too", async () => {
  const store = await openKvStore(":memory:", now);
  try {
    const legacy = (id: string): GrantRecord => ({
      id,
      accountId: "acc1",
      businessId: "biz1",
      clientId: "client1",
      clientName: "client1",
      scopes: ["app.access"],
      resource: config.apiUrl,
      offline: false,
      refreshable: false,
      createdAt: now(),
      authTime: now(),
    });
    assert.ok(
      await store.commit([], [
        ...grantMutations(legacy("old-1"), now()),
        ...grantMutations(legacy("old-2"), now()),
      ]),
    );
    const fresh = await issueGrant({ config, store, now }, {
      accountId: "acc1",
      businessId: "biz1",
      clientId: "client1",
      scopes: ["app.access"],
    });
    assert.deepEqual(await liveGrantIds(store), [fresh.grantId]);
  } finally {
    store.close();
  }
});

Deno.test("of two grants prepared over the same predecessor, only one commits", async () => {
  const store = await openKvStore(":memory:", now);
  try {
    const signer = createTokenSigner({ config, keys: createSigningKeys({ store, now }), now });
    const deps = { store, signer, now };
    const first = await issueGrant({ config, store, now }, {
      accountId: "acc1",
      businessId: "biz1",
      clientId: "client1",
      scopes: ["app.access"],
    });
    const a = await prepareGrant(deps, input(["app.access", "members.read"]));
    const b = await prepareGrant(deps, input(["app.access", "triggers.read"]));
    assert.equal(await store.commit(a.checks, a.mutations), true);
    assert.equal(await store.commit(b.checks, b.mutations), false, "b would leave two grants");
    assert.deepEqual(await liveGrantIds(store), [a.grant.id]);
    const again = await prepareGrant(deps, input(["app.access", "triggers.read"]));
    assert.equal(await store.commit(again.checks, again.mutations), true);
    assert.deepEqual(await liveGrantIds(store), [again.grant.id]);
    assert.equal(await getGrant(store, first.grantId), null);
  } finally {
    store.close();
  }
});
