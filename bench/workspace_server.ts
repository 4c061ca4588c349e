// The server under test of the workspace section: bench/vestibule_server.ts's wiring, plus an
// account, a business and a real access token (app.access) written to the path in argv[0].
import { createAccounts } from "../src/accounts/accounts.ts";
import { createService } from "../src/app.ts";
import { readEnvironment, resolveConfig } from "../src/config/config.ts";
import { issueGrant } from "../testkit/issue_grant.ts";
import { serve } from "../src/server.ts";

const config = resolveConfig(readEnvironment());
const log = () => {};
// VESTIBULE_DATA: KV in memory, or PostgreSQL.
const service = await createService(config, { log, mailLog: log, now: Date.now });
const { store, handler } = service;
const { account, business } = await createAccounts(store, Date.now).createAccountWithBusiness(
  "bench@example.com",
  "Bench",
);
const { tokens } = await issueGrant({ config, store, now: Date.now }, {
  accountId: account.id,
  businessId: business.id,
  clientId: "bench-client",
  scopes: ["app.access"],
});
await Deno.writeTextFile(Deno.args[0]!, tokens.access_token);
const server = serve(config, handler, log);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  await service.close();
  Deno.exit(0);
});
