import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { UNLIMITED } from "../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../src/oauth/cimd.ts";
import type { ClientMetadata } from "../../src/oauth/client_metadata.ts";
import { type ClientRecord, createClients } from "../../src/oauth/clients.ts";
import { issuerOf } from "../../src/oauth/issuer.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "../store/store_contract.ts";
import { ORIGINS } from "./fixtures.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

const METADATA: ClientMetadata = {
  clientName: "Agent",
  redirectUris: ["http://127.0.0.1/cb"],
  grantTypes: ["authorization_code"],
  tokenEndpointAuthMethod: "none",
  scope: null,
  applicationType: "native",
};

Deno.test("a registration belongs to the issuer that made it", async (t) => {
  const clock = manualClock();
  // One store, and the operator moving the authorization server to another address.
  const store = await openKvStore(":memory:", clock.now);
  const clientsOf = (authUrl: string) => {
    const config = resolveConfig({ ...ORIGINS, VESTIBULE_AUTH_URL: authUrl });
    const documents = createMetadataDocuments({
      config,
      now: clock.now,
      budget: UNLIMITED,
      scopes: SPEC_SCOPES,
    });
    return createClients({ store, now: clock.now, documents, issuer: issuerOf(config) });
  };
  const before = clientsOf("https://auth.example.com");
  const after = clientsOf("https://login.example.com");
  try {
    const { client } = await before.register(METADATA);

    await t.step("it records its issuer and application type", () => {
      assert.equal(client.issuer, "https://auth.example.com/api/auth");
      assert.equal(client.applicationType, "native");
    });

    await t.step("the issuer that made it knows it", async () => {
      assert.equal((await before.lookup(client.clientId)).ok, true);
    });

    await t.step("another issuer does not: the client registers again", async () => {
      const lookup = await after.lookup(client.clientId);
      assert.equal(lookup.ok, false);
      if (lookup.ok) return;
      assert.match(
        lookup.description,
        /registered with another authorization server; register again with https:\/\/login\.example\.com\/api\/auth$/,
      );
    });

    await t.step("a registration stored before issuers were recorded stays usable", async () => {
      const { issuer: _issuer, ...older } = client;
      await store.set(["oauth", "client", "older"], { ...older, clientId: "older" });
      const lookup = await after.lookup("older");
      assert.equal(lookup.ok, true);
      assert.equal((lookup as { client: ClientRecord }).client.issuer, undefined);
    });
  } finally {
    store.close();
  }
});
