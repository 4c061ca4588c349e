import assert from "node:assert/strict";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createSessions, safeReturnTo } from "../../src/accounts/sessions.ts";
import { hashSecret } from "../../src/secrets.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "../store/store_contract.ts";

async function setup(authUrl: string) {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  const config = resolveConfig({
    VESTIBULE_BASE_URL: authUrl.replace("8001", "8000").replace("auth.", "www."),
    VESTIBULE_AUTH_URL: authUrl,
    VESTIBULE_API_URL: authUrl.replace("8001", "8002").replace("auth.", "api."),
    VESTIBULE_LISTEN: "127.0.0.1:0",
  });
  const accounts = createAccounts(store, clock.now);
  const sessions = createSessions({ config, store, now: clock.now, accounts });
  const { account } = await accounts.createAccountWithBusiness("s@example.com", "S");
  const withCookie = (setCookie: string) =>
    new Request(`${authUrl}/account`, { headers: { Cookie: setCookie.split(";")[0]! } });
  return { clock, store, sessions, account, withCookie };
}

Deno.test("https sessions use a __Host- cookie with Secure, HttpOnly and SameSite=Lax", async () => {
  const { store, sessions, account, withCookie } = await setup("https://auth.example.com");
  try {
    const cookie = await sessions.start(account.id);
    assert.match(
      cookie,
      /^__Host-vestibule_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; HttpOnly; Secure; SameSite=Lax$/,
    );
    const session = await sessions.current(withCookie(cookie));
    assert.equal(session?.account.id, account.id);
    assert.equal(
      await sessions.current(
        new Request("https://auth.example.com/", {
          headers: { Cookie: cookie.split(";")[0]!.replace("__Host-", "") },
        }),
      ),
      null,
      "the unprefixed name is not accepted on https",
    );
  } finally {
    store.close();
  }
});

Deno.test("session ids are stored hashed and expire after 14 days", async () => {
  const { clock, store, sessions, account, withCookie } = await setup("http://127.0.0.1:8001");
  try {
    const cookie = await sessions.start(account.id);
    assert.match(cookie, /^vestibule_session_8001=/, "the port tells instances apart");
    assert.doesNotMatch(cookie, /Secure/);
    const raw = cookie.split(";")[0]!.split("=")[1]!;
    const keys: string[] = [];
    for await (const entry of store.list(["accounts", "session"])) {
      keys.push(String(entry.key.at(-1)));
    }
    assert.deepEqual(keys, [await hashSecret(raw)]);
    assert.equal((await sessions.current(withCookie(cookie)))?.id, await hashSecret(raw));
    clock.advance(14 * 24 * 60 * 60 * 1000);
    assert.equal(await sessions.current(withCookie(cookie)), null);
  } finally {
    store.close();
  }
});

Deno.test("CSRF tokens are bound to the session and the purpose", async () => {
  const { store, sessions, account, withCookie } = await setup("http://127.0.0.1:8001");
  try {
    const one = (await sessions.current(withCookie(await sessions.start(account.id))))!;
    const two = (await sessions.current(withCookie(await sessions.start(account.id))))!;
    const token = await sessions.csrfToken(one, "consent");
    assert.equal(await sessions.verifyCsrf(one, "consent", token), true);
    assert.equal(await sessions.verifyCsrf(one, "sign-out", token), false, "other purpose");
    assert.equal(await sessions.verifyCsrf(two, "consent", token), false, "other session");
    assert.equal(await sessions.verifyCsrf(one, "consent", ""), false);
    assert.equal(await sessions.verifyCsrf(one, "consent", token.slice(1)), false);
    await sessions.end(one);
    assert.equal(await sessions.verifyCsrf(one, "consent", token), false, "ended session");
  } finally {
    store.close();
  }
});

Deno.test("signInUrl and safeReturnTo keep visitors on this origin", async (t) => {
  const { store, sessions } = await setup("http://127.0.0.1:8001");
  store.close();
  assert.equal(
    sessions.signInUrl("/api/auth/oauth2/authorize?a=1&b=2"),
    "http://127.0.0.1:8001/sign-in?return_to=%2Fapi%2Fauth%2Foauth2%2Fauthorize%3Fa%3D1%26b%3D2",
  );
  const cases: [string | null, string][] = [
    ["/approvals/abc", "/approvals/abc"],
    ["/api/auth/oauth2/authorize?x=1", "/api/auth/oauth2/authorize?x=1"],
    [null, "/account"],
    ["", "/account"],
    ["//evil.example", "/account"],
    ["/\\evil.example", "/account"],
    ["/ok\\..", "/account"],
    ["https://evil.example/", "/account"],
    ["javascript:alert(1)", "/account"],
    ["/line\nbreak", "/account"],
    ["relative", "/account"],
    ["/" + "a".repeat(5000), "/account"],
  ];
  for (const [input, expected] of cases) {
    await t.step(JSON.stringify(input).slice(0, 40), () => {
      assert.equal(safeReturnTo(input), expected);
    });
  }
});
