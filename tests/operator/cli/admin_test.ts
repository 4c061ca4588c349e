import { adminRunner } from "./admin_runner.ts";
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { UNLIMITED } from "../../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../../src/oauth/cimd.ts";
import { createClients } from "../../../src/oauth/clients.ts";
import { issuerOf } from "../../../src/oauth/issuer.ts";
import { getGrant } from "../../../src/oauth/grants.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { createSigningKeys } from "../../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { StoreBusyError, StoreUnavailableError } from "../../../src/store/store.ts";
import { SPEC_SCOPES } from "../../../src/oauth/scopes.ts";

Deno.test("admin commands", async (t) => {
  const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
  const store = await openKvStore(":memory:");
  const now = Date.now;
  const run = adminRunner(store, { now });
  const json = (text: string) => JSON.parse(text);
  try {
    let businessId = "";
    let secondBusinessId = "";
    await t.step("create-business creates the owner and the business", async () => {
      const result = await run("create-business", "--owner", "Boss@Example.com", "--name=Boss Co");
      assert.equal(result.code, 0, result.err);
      const { account, business } = json(result.out);
      assert.equal(account.email, "boss@example.com");
      assert.equal(business.name, "Boss Co");
      businessId = business.id;
      const again = json(
        (await run("create-business", "--owner", "boss@example.com", "--name", "Two")).out,
      );
      assert.equal(again.account.id, account.id, "the same account gets a second business");
      secondBusinessId = again.business.id;
    });

    await t.step("add-member adds a member (creating the account) and lists it", async () => {
      const added = await run(
        "add-member",
        "--business",
        businessId,
        "--email",
        "helper@example.com",
      );
      assert.equal(added.code, 0, added.err);
      assert.equal(json(added.out).role, "member");
      const listed = json((await run("list-businesses", "--email", "helper@example.com")).out);
      assert.equal(listed.businesses.length, 1);
      assert.deepEqual(
        listed.businesses[0].members.map((m: { email: string; role: string }) =>
          `${m.email}:${m.role}`
        ),
        ["boss@example.com:owner", "helper@example.com:member"],
      );
    });

    await t.step("add-member changes a role, but never demotes the only owner", async () => {
      const promoted = await run(
        "add-member",
        "--business",
        businessId,
        "--email",
        "helper@example.com",
        "--role",
        "owner",
      );
      assert.equal(promoted.code, 0, promoted.err);
      assert.equal(json(promoted.out).role, "owner");
      const back = await run(
        "add-member",
        "--business",
        businessId,
        "--email",
        "helper@example.com",
      );
      assert.equal(back.code, 0, back.err);
      assert.equal(json(back.out).role, "member");
      const refused = await run(
        "add-member",
        "--business",
        businessId,
        "--email",
        "Boss@Example.com",
        "--role",
        "member",
      );
      assert.equal(refused.code, 1);
      assert.match(refused.err, /boss@example\.com is the only owner; add another owner first/);
      const members = json((await run("list-businesses", "--email", "boss@example.com")).out)
        .businesses.find((b: { business: { id: string } }) => b.business.id === businessId).members;
      assert.deepEqual(
        members.map((m: { email: string; role: string }) => `${m.email}:${m.role}`),
        ["boss@example.com:owner", "helper@example.com:member"],
      );
    });

    await t.step("bad input is a usage error (2); a missing record is a refusal (1)", async () => {
      const cases: [string[], number, RegExp][] = [
        [[], 2, /Usage: vestibule admin/],
        [["frobnicate"], 2, /unknown command "frobnicate"/],
        [
          ["create-business", "--owner", "not-mail", "--name", "X"],
          2,
          /--owner: email must be an e-mail/,
        ],
        [["create-business", "--owner", "a@b.co"], 2, /--name/],
        [
          ["create-business", "--owner", "a@b.co", "--name", "X", "--name", "Y"],
          2,
          /--name is given twice/,
        ],
        [["create-business", "--owner", "a@b.co", "--name", "X", "--colour", "red"], 2, /--colour/],
        [
          ["add-member", "--business", businessId, "--email", "x@y.co", "--role", "admin"],
          2,
          /role must be owner or member/,
        ],
        [
          ["add-member", "--business", "nope", "--email", "x@y.co"],
          1,
          /No business with id "nope"/,
        ],
        [["list-grants"], 2, /give either --client or --email, not both/],
        [
          ["list-grants", "--client", "c", "--email", "x@y.co"],
          2,
          /give either --client or --email, not both/,
        ],
        [["revoke-grant", "--grant", "missing"], 1, /No live grant with id "missing"/],
        [["audit-log", "--business", "nope"], 1, /No business with id "nope"/],
        [["list-businesses", "--email", "ghost@example.com"], 1, /No account/],
      ];
      for (const [args, code, message] of cases) {
        const result = await run(...args);
        assert.equal(result.code, code, args.join(" "));
        assert.match(result.err, message, args.join(" "));
      }
      assert.equal((await run("help")).code, 0);
    });

    await t.step(
      "list-grants, revoke-grant and revoke-client act on the grant records",
      async () => {
        const accounts = createAccounts(store, now);
        const boss = (await accounts.findAccountByEmail("boss@example.com"))!;
        const issue = (clientId: string, business = businessId) =>
          issueGrant({ config, store, now }, {
            accountId: boss.id,
            businessId: business,
            clientId,
            scopes: ["app.access"],
          });
        const replaced = await issue("client-a");
        const two = await issue("client-a", secondBusinessId);
        const three = await issue("client-b");
        const one = await issue("client-a"); // one grant per account, business and client
        const byClient = json((await run("list-grants", "--client", "client-a")).out);
        assert.deepEqual(
          byClient.grants.map((g: { grantId: string }) => g.grantId).sort(),
          [one.grantId, two.grantId].sort(),
        );
        assert.equal(await getGrant(store, replaced.grantId), null);
        const byEmail = json((await run("list-grants", "--email", "boss@example.com")).out);
        assert.equal(byEmail.grants.length, 3);
        // One shape for a grant, whichever way it was found.
        const fromEmail = byEmail.grants.find((g: { grantId: string }) =>
          g.grantId === one.grantId
        );
        const fromClient = byClient.grants.find((g: { grantId: string }) =>
          g.grantId === one.grantId
        );
        assert.deepEqual(fromEmail, fromClient);
        assert.deepEqual(Object.keys(fromEmail).sort(), [
          "accountId",
          "businessId",
          "clientId",
          "clientName",
          "createdAt",
          "grantId",
          "offline",
          "resource",
          "scopes",
        ]);

        assert.equal((await run("revoke-grant", "--grant", three.grantId)).code, 0);
        assert.equal(await getGrant(store, three.grantId), null);
        const revoked = json((await run("revoke-client", "--client", "client-a")).out);
        assert.equal(revoked.revokedGrants, 2);
        assert.equal(await getGrant(store, one.grantId), null);
        assert.equal(await getGrant(store, two.grantId), null);
      },
    );

    await t.step("list-clients shows registrations; revoke-client deletes one", async () => {
      const clients = createClients({
        store,
        now,
        documents: createMetadataDocuments({ config, now, budget: UNLIMITED, scopes: SPEC_SCOPES }),
        issuer: issuerOf(config),
      });
      const { client } = await clients.register({
        clientName: "Registered app",
        redirectUris: ["http://127.0.0.1/callback"],
        grantTypes: ["authorization_code"],
        tokenEndpointAuthMethod: "client_secret_basic",
        scope: null,
        applicationType: "native",
      });
      const listed = json((await run("list-clients")).out);
      const row = listed.clients.find((c: { clientId: string }) => c.clientId === client.clientId);
      assert.equal(row.clientName, "Registered app");
      assert.equal(row.confidential, true);
      assert.equal(row.secretHash, undefined, "no secret material is printed");
      const revoked = json((await run("revoke-client", "--client", client.clientId)).out);
      assert.equal(revoked.registrationDeleted, true);
      assert.equal((await clients.lookup(client.clientId)).ok, false);
      assert.equal((await run("revoke-client", "--client", client.clientId)).code, 1);
    });

    await t.step("a misspelt or missing argument is named in plain words", async () => {
      const cases: [string[], string][] = [
        [
          ["add-member", "--busines", "b", "--email", "a@example.com"],
          "vestibule admin add-member: unknown argument --busines (expected: --business)",
        ],
        [
          ["create-business", "--owner", "a@example.com", "--nam", "X"],
          "vestibule admin create-business: unknown argument --nam (expected: --name)",
        ],
        [
          ["list-clients", "--all", "yes"],
          "vestibule admin list-clients: unknown argument --all (this command takes none)",
        ],
        [
          ["add-member", "--email", "a@example.com"],
          "vestibule admin add-member: missing argument --business",
        ],
      ];
      for (const [args, line] of cases) {
        const result = await run(...args);
        assert.equal(result.code, 2);
        assert.equal(result.err.split("\n")[0], line);
        assert.ok(!result.err.includes("Invalid key"), result.err);
      }
    });

    await t.step("rotate-signing-key keeps the old key published", async () => {
      const keys = createSigningKeys({ store, now });
      const before = (await keys.current()).kid;
      const result = await run("rotate-signing-key");
      assert.equal(result.code, 0, result.err);
      const { kid, retired } = json(result.out);
      assert.equal(retired, before);
      assert.notEqual(kid, before);
      const published = (await createSigningKeys({ store, now }).jwks()).keys.map((k) => k.kid);
      assert.ok(published.includes(kid) && published.includes(before), published.join());
      assert.equal((await createSigningKeys({ store, now }).current()).kid, kid);
    });
  } finally {
    store.close();
  }
});

Deno.test("an admin command that finds the store locked says so in one line", async () => {
  const store = await openKvStore(":memory:");
  const busy = new StoreBusyError("the store stayed locked by another process through 21 attempts");
  const err: string[] = [];
  try {
    const code = await runAdminCommand(["rotate-signing-key"], {
      config: resolveConfig({ VESTIBULE_DATA: ":memory:" }),
      store: { ...store, commit: () => Promise.reject(busy) },
      now: Date.now,
      out: (s) => assert.fail(`no result expected: ${s}`),
      err: (s) => err.push(s),
    });
    assert.equal(code, 1);
    assert.deepEqual(err, [
      "vestibule admin rotate-signing-key: the store stayed locked by another process through " +
      "21 attempts; try again",
    ]);
  } finally {
    store.close();
  }
});

Deno.test("an admin command that meets a store outage names the store in one line", async () => {
  const store = await openKvStore(":memory:");
  const url = "postgres://app:Secret-4711@db.internal/vestibule";
  const outage = new StoreUnavailableError("the store did not answer within 5 s");
  const err: string[] = [];
  try {
    const code = await runAdminCommand(["rotate-signing-key"], {
      config: resolveConfig({ VESTIBULE_DATA: url }),
      store: { ...store, get: () => Promise.reject(outage), commit: () => Promise.reject(outage) },
      now: Date.now,
      out: (s) => assert.fail(`no result expected: ${s}`),
      err: (s) => err.push(s),
    });
    assert.equal(code, 1);
    assert.deepEqual(err, [
      'vestibule admin rotate-signing-key: VESTIBULE_DATA="postgres://app:***@db.internal/vestibule" ' +
      "does not answer (the store did not answer within 5 s); try again",
    ]);
  } finally {
    store.close();
  }
});

Deno.test("`main.ts admin` runs the admin commands against VESTIBULE_DATA", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "main.ts",
        "admin",
        "create-business",
        "--owner",
        "cli@example.com",
        "--name",
        "Cli Co",
      ],
      cwd: new URL("../../..", import.meta.url),
      env: { VESTIBULE_DATA: `${dir}/store.kv`, NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.equal(JSON.parse(new TextDecoder().decode(output.stdout)).business.name, "Cli Co");
    const store = await openKvStore(`${dir}/store.kv`);
    try {
      const account = await createAccounts(store, Date.now).findAccountByEmail("cli@example.com");
      assert.ok(account, "the account is in the file store");
    } finally {
      store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
