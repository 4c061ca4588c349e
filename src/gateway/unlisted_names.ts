// The tool names VESTIBULE_UPSTREAMS gives an upstream (`gated`, `hidden`, `scopes`) checked
// against what the upstream lists. A name it does not list is a misspelling or a tool renamed
// upstream, and the tool it meant would be served ungated, visible, or under the upstream's
// broader scope: so while any is unlisted, none of the upstream's tools are served (fail closed).
import { logEvent, type LogSink } from "../http/request_log.ts";
import { nearestName } from "../nearest_name.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import { TOOL_NAME } from "../mcp/registry.ts";

export interface UnlistedName {
  readonly setting: "gated" | "hidden" | "scopes";
  readonly name: string;
  /** The listed tool closest to it (what it probably meant); null when it lists none. */
  readonly nearest: string | null;
}

/** Each name of the upstream's settings that `listed` (every name it lists) lacks, in file order. */
export function unlistedNames(
  config: UpstreamConfig,
  listed: readonly string[],
): UnlistedName[] {
  const known = new Set(listed);
  // Only a name the file could have written (the upstream chooses the rest, of any length).
  const candidates = listed.filter((name) => TOOL_NAME.test(name));
  const settings = [
    ["gated", [...config.gated]],
    ["hidden", [...config.hidden]],
    ["scopes", [...config.toolScopes.keys()]],
  ] as const;
  const unlisted: UnlistedName[] = [];
  for (const [setting, names] of settings) {
    for (const name of names) {
      if (known.has(name)) continue;
      const nearest = candidates.length === 0 ? null : nearestName(name, candidates);
      unlisted.push({ setting, name, nearest });
    }
  }
  return unlisted;
}

/** `gated "payy" (nearest listed: "pay"), …`: what the operator must fix, in words. */
export function describeUnlisted(unlisted: readonly UnlistedName[]): string {
  return unlisted.map(({ setting, name, nearest }) =>
    `${setting} ${JSON.stringify(name)} (nearest listed: ${
      nearest === null ? "none" : JSON.stringify(nearest)
    })`
  ).join(", ");
}

/** Why an upstream's tools are held, as its `problem` and `admin upstreams` say it. */
export function heldProblem(config: UpstreamConfig, unlisted: readonly UnlistedName[]): string {
  return `VESTIBULE_UPSTREAMS names tools ${config.title} does not list: ${
    describeUnlisted(unlisted)
  }; none of its tools are served until every name is listed`;
}

/** One error line per unlisted name, naming the upstream, the name and its nearest tool. */
export function logUnlisted(
  log: LogSink,
  config: UpstreamConfig,
  unlisted: readonly UnlistedName[],
): void {
  for (const { setting, name, nearest } of unlisted) {
    logEvent(log, {
      level: "error",
      message: "VESTIBULE_UPSTREAMS names a tool the upstream does not list (misspelt, or " +
        "renamed upstream): none of its tools are served until every name is listed",
      upstream: config.name,
      setting,
      tool: name,
      nearest,
    });
  }
}
