// The server under test of the workspace section: bench/vestibule_server.ts's wiring, plus an
// account, a business and a real access token (app.access) written to the path in argv[0].
import { createAccounts } from "../src/accounts/accounts.ts";
import { createAccountServices } from "../src/accounts/services.ts";
import { createApp } from "../src/app.ts";
import { readEnvironment, resolveConfig } from "../src/config/config.ts";
import { issueGrant } from "../tests/oauth/issue_grant.ts";
import { serve } from "../src/server.ts";
import { openStore } from "../src/store/open.ts";

const config = resolveConfig(readEnvironment());
const log = () => {};
const store = await openStore(config); // VESTIBULE_DATA: KV in memory, or PostgreSQL
const services = createAccountServices({ config, store, now: Date.now, mailLog: log });
const handler = await createApp({ config, log, now: Date.now, store, ...services });
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
  await store.close();
  Deno.exit(0);
});
