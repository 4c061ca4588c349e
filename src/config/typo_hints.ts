// Names an operator may mistype: the nearest setting of an unknown name, the refusal of unknown
// names, and the names start-up looks for when it may not list the environment.
import { nearestName } from "../nearest_name.ts";
import { ConfigError, SETTINGS } from "./settings.ts";

/** Names an operator may guess that no setting has, each with the setting that does its job. */
export const LIKELY_TYPOS: Readonly<Record<string, string>> = {
  VESTIBULE_PORT: SETTINGS.listen.env,
  VESTIBULE_HOST: SETTINGS.listen.env,
  VESTIBULE_URL: SETTINGS.baseUrl.env,
  VESTIBULE_DATA_DIR: SETTINGS.dataPath.env,
  VESTIBULE_UPSTREAMS_FILE: SETTINGS.upstreamsFile.env,
};

const PREFIX = "VESTIBULE_";
const KNOWN: readonly string[] = Object.values(SETTINGS).map((s) => s.env);
const KNOWN_NAMES: ReadonlySet<string> = new Set(KNOWN);

/** The `VESTIBULE_*` variables set in `env` that no setting reads. */
export function unknownVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.keys(env).filter((name) =>
    name.startsWith(PREFIX) && env[name] !== undefined && !KNOWN_NAMES.has(name)
  );
}

/**
 * A misspelt setting silently ignored (VESTIBULE_TRUST_PROXY, VESTIBULE_MAIL_FROM) is worse than
 * a refused start: throws ConfigError naming every unknown variable and its nearest setting.
 */
export function refuseUnknownVariables(env: Readonly<Record<string, string | undefined>>): void {
  const unknown = unknownVariables(env);
  if (unknown.length === 0) return;
  const named = unknown.map((name) =>
    `${name} (expected: ${LIKELY_TYPOS[name] ?? nearestName(name, KNOWN)})`
  );
  throw new ConfigError(`unknown variable${unknown.length > 1 ? "s" : ""} ${named.join(", ")}`);
}

/** `env` without its unknown variables (the doctor reports them rather than stopping). */
export function withoutUnknownVariables(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const unknown = new Set(unknownVariables(env));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !unknown.has(name)));
}

const SLIPS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_";

/**
 * The names to look for when the environment cannot be listed (`--allow-env=VESTIBULE_*`):
 * each setting's name with one slip after the prefix (a character missing, added or changed, or
 * two swapped: VESTIBULE_ADMIN_LISTN, VESTIBULE_MAIL_FORM), without its inner underscores
 * (VESTIBULE_BASEURL), in lower case, and the guesses of LIKELY_TYPOS. Made one at a time, some
 * twice, and never kept: the 22,000 names held at once were 4–10 MiB of the idle server's memory.
 */
export function* likelyTypos(): Generator<string> {
  for (const name of _slips()) if (!KNOWN_NAMES.has(name)) yield name;
}

/** likelyTypos' names and some settings' own (a character changed to itself, say). */
function* _slips(): Generator<string> {
  yield* Object.keys(LIKELY_TYPOS);
  for (const env of KNOWN) {
    const rest = env.slice(PREFIX.length);
    yield PREFIX + rest.replaceAll("_", "");
    yield PREFIX + rest.toLowerCase();
    for (let i = 0; i <= rest.length; i++) {
      const [before, after] = [rest.slice(0, i), rest.slice(i)];
      for (const c of SLIPS) yield PREFIX + before + c + after;
      if (after === "") continue;
      yield PREFIX + before + after.slice(1);
      for (const c of SLIPS) yield PREFIX + before + c + after.slice(1);
      if (after.length > 1) yield PREFIX + before + after[1] + after[0] + after.slice(2);
    }
  }
}
