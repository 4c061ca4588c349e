// Value schemas several settings share: origins, switches, listen addresses, durations.
import * as v from "valibot";

export interface ListenAddress {
  readonly hostname: string;
  readonly port: number;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

export const OriginSchema = v.pipe(
  v.string(),
  v.check((s) => URL.canParse(s), "must be an absolute URL"),
  v.transform((s) => new URL(s)),
  v.check((u) => u.protocol === "http:" || u.protocol === "https:", "must use http or https"),
  v.check(
    (u) => u.pathname === "/" && u.search === "" && u.hash === "" && u.username === "",
    "must be an origin without path, query, fragment or userinfo",
  ),
  v.check(
    (u) => u.protocol === "https:" || isLoopbackHost(u.hostname),
    "must use https unless the host is loopback",
  ),
  v.transform((u) => u.origin),
);

/** The words a switch takes, in any case; docs/configuration.md lists the same (a test compares). */
export const SWITCH_WORDS = {
  on: ["on", "yes", "true", "1"],
  off: ["off", "no", "false", "0"],
} as const;

export const SwitchSchema = v.pipe(
  v.string(),
  v.transform((s) => s.toLowerCase()),
  v.picklist(
    [...SWITCH_WORDS.on, ...SWITCH_WORDS.off],
    `must be ${SWITCH_WORDS.on.map((word, i) => `${word}/${SWITCH_WORDS.off[i]}`).join(", ")}`,
  ),
  v.transform((s) => (SWITCH_WORDS.on as readonly string[]).includes(s)),
);

export const ListenSchema = v.pipe(
  v.string(),
  v.transform((s) => s.split(",").map((part) => part.trim()).filter((part) => part !== "")),
  v.array(
    v.pipe(
      v.string(),
      v.regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "must be host:port[,host:port]"),
      v.transform((s): ListenAddress => {
        const at = s.lastIndexOf(":");
        return { hostname: s.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(s.slice(at + 1)) };
      }),
      v.check((a) => a.port <= 65535, "port must be at most 65535"),
    ),
  ),
);

/** Seconds, decimals allowed (`0.5`), as milliseconds. */
export const SecondsSchema = v.pipe(
  v.string(),
  v.regex(/^\d+(\.\d{1,3})?$/, "must be a number of seconds"),
  v.transform((s) => Math.round(Number(s) * 1000)),
  v.minValue(100, "must be at least 0.1"),
  v.maxValue(3_600_000, "must be at most 3600"),
);
