// `deno task admin …` and `vestibule admin …`: configuration, store, one command, exit status.
import { readEnvironment, resolveConfig } from "../../config/config.ts";
import { checkGrantedPaths } from "../../config/granted_paths.ts";
import { ConfigError } from "../../config/settings.ts";
import { withoutUnknownVariables } from "../../config/typo_hints.ts";
import { describeDataSetting, openStore } from "../../store/open.ts";
import { refuseNewerSchema, SchemaError } from "../../schema.ts";
import { readAdminCommand } from "./commands.ts";
import { runtime } from "../../runtime/current.ts";

/** Leading `--name=value` arguments are configuration flags (e.g. `--data=PATH`). */
export async function adminMain(args: readonly string[]): Promise<number> {
  const firstCommandArg = args.findIndex((arg) => !arg.startsWith("--") || arg === "--help");
  const split = firstCommandArg === -1 ? args.length : firstCommandArg;
  let config;
  const env = readEnvironment();
  // An unknown variable stops every command as it stops the server; `check` lists it as a fault
  // among the others instead.
  const check = args[split] === "check";
  try {
    config = resolveConfig(check ? withoutUnknownVariables(env) : env, args.slice(0, split));
    checkGrantedPaths(config, ["dataPath"]);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`vestibule admin: configuration error: ${error.message}`);
    return 2;
  }
  const print = {
    out: (text: string) => console.log(text),
    err: (text: string) => console.error(text),
  };
  // Usage, help and a wrong command line are answered without the store: nothing is opened,
  // and no empty store made where VESTIBULE_DATA points.
  const invocation = readAdminCommand(args.slice(split), print);
  if ("status" in invocation) return invocation.status;
  let store;
  try {
    store = await openStore(config);
  } catch (error) {
    console.error(
      `vestibule admin: cannot open ${describeDataSetting(config)}: ${(error as Error).message}`,
    );
    return 2;
  }
  try {
    // A newer release's records are shapes this one would misread or overwrite; `check`
    // only reads, and reports that itself.
    if (!check) await refuseNewerSchema(store);
  } catch (error) {
    await store.close();
    if (!(error instanceof SchemaError)) throw error;
    console.error(
      `vestibule admin: ${describeDataSetting(config)}: ${error.message}`,
    );
    return 2;
  }
  try {
    return await invocation.run({
      config,
      store,
      now: Date.now,
      ...print,
      input: () => new Response(runtime.stdin()).text(),
      env,
    });
  } finally {
    await store.close();
  }
}

if (import.meta.main) runtime.exit(await adminMain([...runtime.args]));
