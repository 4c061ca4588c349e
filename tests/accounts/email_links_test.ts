import assert from "node:assert/strict";
import { createAccounts } from "../../src/accounts/accounts.ts";
import type { Mail } from "../../src/mail/mailer.ts";
import { createProcessServices } from "../../src/process_services.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Key, Store } from "../../src/store/store.ts";

/** The store, recording each operation as its kind and key namespace (ids and digests dropped). */
function recording(store: Store): { store: Store; operations: string[] } {
  const operations: string[] = [];
  const at = (key: Key) => key.slice(0, 2).join("/");
  return {
    operations,
    store: {
      get(key) {
        operations.push(`get ${at(key)}`);
        return store.get(key);
      },
      set(key, value, options) {
        operations.push(`set ${at(key)} expireIn=${options?.expireIn}`);
        return store.set(key, value, options);
      },
      delete(key) {
        operations.push(`delete ${at(key)}`);
        return store.delete(key);
      },
      commit(checks, mutations) {
        operations.push(
          `commit ${checks.map((c) => at(c.key))} ${mutations.map((m) => at(m.key))}`,
        );
        return store.commit(checks, mutations);
      },
      list(prefix, options) {
        operations.push(`list ${at(prefix)}`);
        return store.list(prefix, options);
      },
      snapshot(prefix) {
        operations.push(`snapshot ${at(prefix ?? [])}`);
        return store.snapshot(prefix);
      },
      close: () => store.close(),
    },
  };
}

Deno.test("sign-in and sign-up do the same work whether or not the address has an account", async (t) => {
  const kv = await openKvStore(":memory:");
  const now = () => 1_800_000_000_000;
  const config = resolveConfig({ VESTIBULE_AUTH_URL: "http://127.0.0.1:8001" });
  await createAccounts(kv, now).createAccountWithBusiness("known@example.com", "Known Ltd");
  const { store, operations } = recording(kv);
  const mails: Mail[] = [];
  // The real mail path: link and mail recorded in one commit, then sent from the outbox.
  const { emailLinks } = createProcessServices({
    config,
    store,
    now,
    mailLog: (line) => mails.push(JSON.parse(line)),
  });
  /** The store operations and the mail of one request. */
  const workOf = async (request: () => Promise<unknown>) => {
    operations.length = 0;
    mails.length = 0;
    await request();
    assert.equal(mails.length, 1, "one mail");
    return { operations: [...operations], subject: mails[0]!.subject };
  };
  try {
    await t.step("sign-in: the same store reads and writes, and one mail", async () => {
      const signIn = (email: string) => () =>
        emailLinks.requestSignIn({ email, clientAddress: "192.0.2.1" });
      const known = await workOf(signIn("known@example.com"));
      const unknown = await workOf(signIn("nobody@example.com"));
      assert.deepEqual(unknown, known);
      // The link and its mail (with its place in the outbox's due index) are written in one commit.
      assert.ok(
        known.operations.includes("commit  accounts/email_link,outbox/delivery,outbox/due"),
      );
    });

    await t.step("sign-up: the same store reads and writes, and one mail", async () => {
      const signUp = (email: string) => () =>
        emailLinks.requestSignUp({ email, businessName: "B", clientAddress: "192.0.2.2" });
      assert.deepEqual(
        await workOf(signUp("nobody@example.com")),
        await workOf(signUp("known@example.com")),
      );
    });
  } finally {
    kv.close();
  }
});
