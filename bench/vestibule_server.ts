// Vestibule as the benchmarks run it: wired like main.ts, but the request log goes nowhere
// (a terminal would otherwise be the bottleneck). Configuration comes from the VESTIBULE_*
// variables the bench passes (rate limits off; the store in memory, or a KV file for sign-in).
import { createService } from "../src/app.ts";
import { readEnvironment, resolveConfig } from "../src/config/config.ts";
import { serve } from "../src/server.ts";

const config = resolveConfig(readEnvironment());
const log = () => {};
const service = await createService(config, { log, mailLog: log, now: Date.now });
const server = serve(config, service.handler, log);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  await service.close();
  Deno.exit(0);
});
