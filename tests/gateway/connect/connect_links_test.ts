// The connect link of a URL elicitation: bound to one account, one upstream and one business,
// expiring; anything else reads as someone else's.
import assert from "node:assert/strict";
import {
  CONNECT_LINK_LIFETIME_MS,
  createConnectLinks,
} from "../../../src/gateway/connect/connect_links.ts";
import { loadVault, newVaultKey } from "../../../src/gateway/connect/vault.ts";

async function fixture() {
  const path = await Deno.makeTempFile({ suffix: ".key" });
  await Deno.chmod(path, 0o600);
  await Deno.writeTextFile(path, `${newVaultKey()}\n`);
  const vault = await loadVault(path);
  await Deno.remove(path);
  const clock = { t: Date.UTC(2026, 0, 1) };
  return { clock, links: createConnectLinks({ vault, now: () => clock.t }) };
}

const alice = { businessId: "biz_1", accountId: "acc_alice" };
const BASE = "https://auth.example/connections/crm?business=biz_1";

Deno.test("a bound link opens for its own person only, on its own upstream and business, until it expires", async () => {
  const { clock, links } = await fixture();
  const url = await links.bound(BASE, "crm", alice);
  assert.ok(url.startsWith(`${BASE}&for=`), url);
  const binding = new URL(url).searchParams.get("for")!;
  assert.doesNotMatch(binding, /acc_alice/);

  assert.equal(await links.check("crm", alice, binding), "ok");
  assert.equal(await links.check("crm", { ...alice, accountId: "acc_bob" }, binding), "foreign");
  assert.equal(await links.check("crm", { ...alice, businessId: "biz_2" }, binding), "foreign");
  assert.equal(await links.check("helpdesk", alice, binding), "foreign");
  assert.equal(await links.check("crm", alice, `${binding}x`), "foreign");
  assert.equal(await links.check("crm", alice, "not.a.binding"), "foreign");
  assert.equal(await links.check("crm", alice, ""), "foreign");

  clock.t += CONNECT_LINK_LIFETIME_MS - 1;
  assert.equal(await links.check("crm", alice, binding), "ok");
  clock.t += 1;
  assert.equal(await links.check("crm", alice, binding), "expired");
});
