// The OAuth core in process: an in-memory store on a manual clock, real accounts, keys,
// signer and clients, and codes issued as a consent would (never imported by production code).
import { issuerOf } from "../../src/oauth/issuer.ts";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { UNLIMITED } from "../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../src/oauth/cimd.ts";
import type { ClientRecord } from "../../src/oauth/clients.ts";
import { createClients } from "../../src/oauth/clients.ts";
import { type CodeBinding, issueCode } from "../../src/oauth/codes.ts";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { createTokenSigner } from "../../src/oauth/tokens.ts";
import { base64url, sha256 } from "../../src/secrets.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "../store/store_contract.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

/** The three public origins of the in-process tests, as the environment names them. */
export const ORIGINS = Object.freeze({
  VESTIBULE_BASE_URL: "https://www.example.com",
  VESTIBULE_AUTH_URL: "https://auth.example.com",
  VESTIBULE_API_URL: "https://api.example.com",
});

export const config = resolveConfig({ ...ORIGINS, VESTIBULE_RATE_LIMITS: "off" });

export const REDIRECT = "https://client.example/cb";
export const VERIFIER = "v".repeat(43);

export async function oauthCore() {
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const now = clock.now;
  const store = await openKvStore(":memory:", now);
  const accounts = createAccounts(store, now);
  const keys = createSigningKeys({ store, now });
  const signer = createTokenSigner({ config, keys, now });
  const clients = createClients({
    store,
    now,
    documents: createMetadataDocuments({ config, now, budget: UNLIMITED, scopes: SPEC_SCOPES }),
    issuer: issuerOf(config),
  });
  const register = async (grantTypes: ClientRecord["grantTypes"] = ["authorization_code"]) =>
    (await clients.register({
      clientName: "Agent",
      redirectUris: [REDIRECT],
      grantTypes,
      tokenEndpointAuthMethod: "none",
      scope: null,
      applicationType: "native",
    })).client;
  const { account: owner, business } = await accounts.createAccountWithBusiness(
    "owner@example.com",
    "Acme",
  );
  const member = await accounts.addMember(business.id, "member@example.com", "member");
  const challenge = base64url(await sha256(VERIFIER));
  /** A code as the consent issues it: for `client`, the owner, and the business. */
  const code = (client: ClientRecord, binding: Partial<CodeBinding> = {}) =>
    issueCode(store, {
      clientId: client.clientId,
      redirectUri: REDIRECT,
      codeChallenge: challenge,
      resource: config.apiUrl,
      scopes: ["app.access"],
      accountId: owner.id,
      businessId: business.id,
      nonce: null,
      authTime: now(),
      ...binding,
    });
  return {
    clock,
    now,
    store,
    accounts,
    keys,
    signer,
    clients,
    register,
    code,
    /** The code_challenge of every code `code` issues (S256 of VERIFIER). */
    challenge,
    owner,
    memberId: member.accountId,
    business,
    /** What token_grants.ts needs. */
    deps: { config, store, now, signer, accounts, scopes: SPEC_SCOPES },
    close: () => store.close(),
  };
}
