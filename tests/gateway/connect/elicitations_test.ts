// The workspace's URL elicitation keeping: declared modes per grant and client, and requestState
// sealed, bound to the caller and the call, expiring, single-use, and not used up when refused.
import assert from "node:assert/strict";
import { loadVault, newVaultKey } from "../../../src/gateway/connect/vault.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { WorkspaceAuth } from "../../../src/workspace/mcp/bearer.ts";
import {
  createWorkspaceElicitations,
  MODES_KEPT_MS,
  REQUEST_STATE_LIFETIME_MS,
} from "../../../src/gateway/connect/elicitations.ts";

async function fixture() {
  const path = await Deno.makeTempFile({ suffix: ".key" });
  await Deno.chmod(path, 0o600);
  await Deno.writeTextFile(path, `${newVaultKey()}\n`);
  const vault = await loadVault(path);
  await Deno.remove(path);
  const clock = { t: Date.UTC(2026, 0, 1) };
  const now = () => clock.t;
  const store = await openKvStore(":memory:", now);
  return { clock, store, hooks: createWorkspaceElicitations({ store, vault, now }) };
}

const auth: WorkspaceAuth = {
  accountId: "acc_1",
  businessId: "biz_1",
  clientId: "client_1",
  clientName: "Agent",
  grantId: "grant_1",
  scopes: ["app.access"],
  role: "member",
};
const call = { name: "crm__echo", arguments: { text: "hi", n: 1 } };

Deno.test("declared URL mode is kept per grant and client, replaced by the next initialize, and forgotten unused", async () => {
  const { clock, store, hooks } = await fixture();
  try {
    assert.equal(await hooks.declared(auth), false);
    await hooks.remember(auth, true);
    assert.equal(await hooks.declared(auth), true);
    assert.equal(await hooks.declared({ ...auth, grantId: "grant_2" }), false);
    assert.equal(await hooks.declared({ ...auth, clientId: "client_2" }), false);
    await hooks.remember(auth, false);
    assert.equal(await hooks.declared(auth), false);
    await hooks.remember(auth, true);
    clock.t += MODES_KEPT_MS;
    assert.equal(await hooks.declared(auth), false);
  } finally {
    await store.close();
  }
});

Deno.test("a requestState is good once, for its own caller and call, until it expires; a refused one is not used up", async () => {
  const { clock, store, hooks } = await fixture();
  try {
    const state = await hooks.issue(auth, call);
    // Key order of the arguments does not matter (canonical JSON); their values do.
    const same = { name: call.name, arguments: { n: 1, text: "hi" } };
    const refusals: [WorkspaceAuth, typeof call, string, RegExp][] = [
      [auth, call, state.replace(/\.(.)/, (_, c) => `.${c === "A" ? "B" : "A"}`), /not one/],
      [auth, call, "garbage", /not one/],
      [{ ...auth, accountId: "acc_2" }, call, state, /another caller/],
      [{ ...auth, businessId: "biz_2" }, call, state, /another caller/],
      [{ ...auth, clientId: "client_2" }, call, state, /another caller/],
      [{ ...auth, grantId: "grant_2" }, call, state, /another caller/],
      [auth, { ...call, name: "crm__whoami" }, state, /another call/],
      [auth, { ...call, arguments: { text: "hi", n: 2 } }, state, /another call/],
    ];
    for (const [who, what, text, words] of refusals) {
      assert.match((await hooks.redeem(who, what, text))!, words);
    }
    assert.equal(await hooks.redeem(auth, same, state), null);
    assert.match((await hooks.redeem(auth, call, state))!, /already used/);

    const late = await hooks.issue(auth, call);
    clock.t += REQUEST_STATE_LIFETIME_MS;
    assert.match((await hooks.redeem(auth, call, late))!, /expired/);
  } finally {
    await store.close();
  }
});
