// Paths the configuration names that the process must have been granted.
import type { Config } from "./config.ts";
import { ConfigError, SETTINGS } from "./settings.ts";
import { runtime } from "../runtime/current.ts";

/** A path setting a process uses: the store, or the mail outbox. */
export type PathSetting = "dataPath" | "mail";

/**
 * Refuses, with one line naming the variable, a configured path this process was not granted
 * (`--allow-read`/`--allow-write`): it would otherwise start fine and fail on first use.
 * Read as well as write: start-up checks the files' modes (src/private_files.ts).
 */
export function checkGrantedPaths(
  config: Config,
  settings: readonly PathSetting[],
  granted: (name: "read" | "write", path: string) => boolean = runtime.isGranted,
): void {
  const paths: { env: string; value: string; path: string }[] = [];
  if (settings.includes("dataPath") && config.dataPath !== ":memory:" && !config.postgres) {
    paths.push({ env: SETTINGS.dataPath.env, value: config.dataPath, path: config.dataPath });
  }
  if (settings.includes("mail") && config.mail.kind === "file") {
    const path = config.mail.path;
    paths.push({ env: SETTINGS.mail.env, value: `file:${path}`, path });
  }
  for (const { env, value, path } of paths) {
    if (granted("read", path) && granted("write", path)) continue;
    throw new ConfigError(
      `${env}=${JSON.stringify(value)}: this process may not read and write ${path}; it must ` +
        "lie in a directory given to --allow-read and --allow-write (./data for deno task start)",
    );
  }
}
