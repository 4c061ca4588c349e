// The server under test of the oauth section: the real wiring, plus a registered public
// client, `codes` single-use authorization codes (one PKCE verifier for all) and one
// refresh token per connection, written as JSON to the path in argv[0]. A grant is one per
// account, business and client, so the codes go round a set of accounts and each refresh
// chain has an account of its own: concurrent requests do not replace each other's grant.
// argv: <out.json> <codes> <refresh chains>
import { createAccounts } from "../src/accounts/accounts.ts";
import { createService } from "../src/app.ts";
import { readEnvironment, resolveConfig } from "../src/config/config.ts";
import { issueCode } from "../src/oauth/codes.ts";
import { issueGrant, registerPublicClient } from "../testkit/issue_grant.ts";
import { base64url, sha256 } from "../src/secrets.ts";
import { serve } from "../src/server.ts";

const [out, codeCount, chainCount] = [Deno.args[0]!, Number(Deno.args[1]), Number(Deno.args[2])];
const config = resolveConfig(readEnvironment());
const log = () => {};
const now = Date.now;
// VESTIBULE_DATA: KV in memory, or PostgreSQL.
const service = await createService(config, { log, mailLog: log, now });
const { store, handler } = service;
const accounts = createAccounts(store, now);
const { business } = await accounts.createAccountWithBusiness("bench@example.com", "Bench");
const members = async (prefix: string) => {
  const ids: string[] = [];
  for (let i = 0; i < chainCount; i++) {
    ids.push(
      (await accounts.addMember(business.id, `${prefix}-${i}@example.com`, "member")).accountId,
    );
  }
  return ids;
};
const [codeAccounts, chainAccounts] = [await members("code"), await members("chain")];
const client = await registerPublicClient({ config, store, now }, {
  clientName: "Bench client",
  redirectUri: "http://127.0.0.1/cb",
  refresh: true,
});
const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
const challenge = base64url(await sha256(verifier));
const codes: string[] = [];
for (let i = 0; i < codeCount; i++) {
  codes.push(
    await issueCode(store, {
      clientId: client.clientId,
      redirectUri: "http://127.0.0.1/cb",
      codeChallenge: challenge,
      resource: config.apiUrl,
      scopes: ["app.access"],
      accountId: codeAccounts[i % chainCount]!,
      businessId: business.id,
      nonce: null,
      authTime: now(),
    }),
  );
}
const refreshTokens: string[] = [];
for (let i = 0; i < chainCount; i++) {
  const { tokens } = await issueGrant({ config, store, now }, {
    accountId: chainAccounts[i]!,
    businessId: business.id,
    clientId: client.clientId,
    scopes: ["app.access"],
    refresh: true,
  });
  refreshTokens.push(tokens.refresh_token!);
}
await Deno.writeTextFile(
  out,
  JSON.stringify({ clientId: client.clientId, verifier, codes, refreshTokens }),
);
const server = serve(config, handler, log);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  await service.close();
  Deno.exit(0);
});
