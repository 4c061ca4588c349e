// Every time an admin command prints is ISO 8601 in UTC: no epoch milliseconds, no time without
// a zone (issue 35, point 3). Each command that reads records runs on a store that has them.
import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/config.ts";
import { UNLIMITED } from "../../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../../src/oauth/cimd.ts";
import { createClients } from "../../../src/oauth/clients.ts";
import { issuerOf } from "../../../src/oauth/issuer.ts";
import { SPEC_SCOPES } from "../../../src/oauth/scopes.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { adminRunner, withStore } from "./admin_runner.ts";

/** Epoch milliseconds of this century (13 digits), as a JSON number or in words. */
const EPOCH_MS = /(?<![\d.])1\d{12}(?![\d.])/;
/** A date and time not followed by a zone. */
const ZONELESS = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(?![\d:.]*(Z|[+-]\d{2}:?\d{2}))/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

Deno.test("admin output carries every time as ISO 8601 in UTC, never epoch milliseconds", async () => {
  await withStore(async (store) => {
    const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
    const run = adminRunner(store, { config });
    const outputs = new Map<string, string>();
    const record = async (...args: string[]) => {
      const result = await run(...args);
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.err}`);
      outputs.set(args.join(" "), result.out);
      return result.out;
    };
    const created = JSON.parse(
      await record("create-business", "--owner", "owner@example.com", "--name", "Acme"),
    );
    const business = created.business.id;
    await record("add-member", "--business", business, "--email", "member@example.com");
    const clients = createClients({
      store,
      now: Date.now,
      documents: createMetadataDocuments({
        config,
        now: Date.now,
        budget: UNLIMITED,
        scopes: SPEC_SCOPES,
      }),
      issuer: issuerOf(config),
    });
    const { client } = await clients.register({
      clientName: "Registered app",
      redirectUris: ["http://127.0.0.1/callback"],
      grantTypes: ["authorization_code"],
      tokenEndpointAuthMethod: "none",
      scope: null,
      applicationType: "native",
    });
    await issueGrant({ config, store, now: Date.now }, {
      accountId: created.account.id,
      businessId: business,
      clientId: client.clientId,
      scopes: ["app.access"],
    });
    await record("list-accounts");
    await record("list-businesses");
    await record("list-clients");
    await record("list-grants", "--email", "owner@example.com");
    await record("list-outbox");
    await record("remove-member", "--business", business, "--email", "member@example.com");
    await record("rotate-signing-key");
    await record("delete-account", "--email", "member@example.com");
    await record("audit-log", "--business", business);
    await record("operator-log");

    for (const [command, out] of outputs) {
      assert.doesNotMatch(out, EPOCH_MS, `${command} prints epoch milliseconds:\n${out}`);
      assert.doesNotMatch(out, ZONELESS, `${command} prints a time without a zone:\n${out}`);
    }
    // The times are there, and read as UTC.
    const accounts = JSON.parse(outputs.get("list-accounts")!).accounts;
    assert.match(accounts[0].account.createdAt, ISO_UTC);
    const audit = JSON.parse(outputs.get(`audit-log --business ${business}`)!).entries;
    assert.ok(audit.length > 0);
    for (const entry of audit) assert.match(entry.at, ISO_UTC);
    const operatorLog = JSON.parse(outputs.get("operator-log")!).entries;
    assert.ok(operatorLog.length > 0);
    for (const entry of operatorLog) assert.match(entry.at, ISO_UTC);
    const registered = JSON.parse(outputs.get("list-clients")!).clients[0];
    assert.match(registered.issuedAt, ISO_UTC);
  }, { stamped: true });
});
