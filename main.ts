import { createAccountServices } from "./src/accounts/services.ts";
import { createApp } from "./src/app.ts";
import { ConfigError, readEnvironment, resolveConfig } from "./src/config.ts";
import { serve } from "./src/server.ts";
import { openKvStore } from "./src/store/kv_store.ts";

async function main(): Promise<number> {
  let config;
  try {
    config = resolveConfig(readEnvironment(), Deno.args);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`vestibule: configuration error: ${error.message}`);
    return 2;
  }
  const log = (line: string) => console.log(line);
  const store = await openKvStore(config.dataPath);
  // Mail goes to stderr so the development mailer's links stay out of the request log.
  const mailLog = (line: string) => console.error(line);
  const services = createAccountServices({ config, store, now: Date.now, mailLog });
  const handler = await createApp({ config, log, now: Date.now, store, ...services });
  const server = serve(config.listen, handler, { trustProxy: config.trustProxy });
  log(JSON.stringify({
    message: "listening",
    listen: server.addresses.map((a) => `${a.hostname}:${a.port}`),
    origins: [config.baseUrl, config.authUrl, config.apiUrl],
  }));
  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await stopped.promise;
  await server.shutdown();
  store.close();
  log(JSON.stringify({ message: "stopped" }));
  return 0;
}

if (import.meta.main) Deno.exit(await main());
