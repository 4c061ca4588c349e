// Vestibule as the benchmarks run it: wired like main.ts, but the request log goes nowhere
// (a terminal would otherwise be the bottleneck). Configuration comes from the VESTIBULE_*
// variables the bench passes (rate limits off; the store in memory, or a KV file for sign-in).
import { createAccountServices } from "../src/accounts/services.ts";
import { createApp } from "../src/app.ts";
import { readEnvironment, resolveConfig } from "../src/config/config.ts";
import { serve } from "../src/server.ts";
import { openKvStore } from "../src/store/kv_store.ts";

const config = resolveConfig(readEnvironment());
const log = () => {};
const store = await openKvStore(config.dataPath);
const services = createAccountServices({ config, store, now: Date.now, mailLog: log });
const handler = await createApp({ config, log, now: Date.now, store, ...services });
const server = serve(config, handler, log);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  store.close();
  Deno.exit(0);
});
