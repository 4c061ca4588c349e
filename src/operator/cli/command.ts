// The admin command framework: a command's usage, its options' schema and its run, parsed
// and checked the same way for every command.
import * as v from "valibot";
import type { Config } from "../../config/config.ts";
import { nearestName } from "../../nearest_name.ts";
import { type GrantRecord } from "../../oauth/grants.ts";
import { type Store } from "../../store/store.ts";
import { createAuditLog } from "../../workspace/domain/audit.ts";
import { revokeGrantWithAudit } from "../../workspace/domain/grant_revocation.ts";

export interface AdminDeps {
  readonly config: Config;
  readonly store: Store;
  readonly now: () => number;
  /** Results, one JSON document per command. */
  readonly out: (text: string) => void;
  /** Errors and usage. */
  readonly err: (text: string) => void;
  /** All of standard input (import reads a backup from it). */
  readonly input?: () => Promise<string>;
  /** The VESTIBULE_* variables (check reports unknown ones); none by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The templates' directory check looks for placeholders in; static/ by default. */
  readonly staticDir?: URL;
  /** How a following command (`audit --follow`) waits between looks; a timer by default. */
  readonly wait?: (ms: number) => Promise<void>;
  /** Ends a following command; the CLI's runs until it is killed. */
  readonly stop?: AbortSignal;
}

/** A refusal worth a one-line message and exit status 1 (not found, nothing to do). */
export class AdminError extends Error {}

/** A malformed command line: the message, the command's usage and exit status 2. */
export class AdminUsageError extends Error {}

/** `--limit N` of the log commands: 1 to 1000, 100 when absent. */
export const LimitSchema = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(1, "must be at least 1"),
    v.maxValue(1000, "must be at most 1000"),
  ),
  "100",
);

export const IdSchema = v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty"));

export interface Command<S extends v.GenericSchema<unknown, unknown>> {
  readonly usage: string;
  readonly summary: string;
  /** Options given bare, without a value (`--live`); parsed as "on". */
  readonly switches?: readonly string[];
  readonly options: S;
  readonly run: (options: v.InferOutput<S>, deps: AdminDeps) => Promise<unknown>;
}

/** What the dispatcher needs of a command; options are parsed by the command's own schema. */
export interface Runnable {
  readonly usage: string;
  readonly summary: string;
  readonly switches: readonly string[];
  /**
   * Checks the options (an AdminUsageError names what is wrong) and gives the command to run on
   * the store: nothing is opened for a command line that is wrong.
   */
  prepare(options: Record<string, string>): (deps: AdminDeps) => Promise<unknown>;
}

export function command<S extends v.GenericSchema<unknown, unknown>>(
  command: Command<S>,
): Runnable {
  return {
    usage: command.usage,
    summary: command.summary,
    switches: command.switches ?? [],
    prepare(options) {
      // The usage line names every option; the validator's words are not for operators.
      const known = [...command.usage.matchAll(/--[a-z-]+/g)].map((m) => m[0]);
      for (const name of Object.keys(options).map((key) => `--${key}`)) {
        if (known.includes(name)) continue;
        throw new AdminUsageError(
          known.length === 0
            ? `unknown argument ${name} (this command takes none)`
            : `unknown argument ${name} (expected: ${nearestName(name, known)})`,
        );
      }
      const parsed = v.safeParse(command.options, options);
      if (!parsed.success) {
        const issue = parsed.issues[0];
        const path = issue.path?.map((p) => `--${String(p.key)}`).join(" ");
        if (path && issue.type === "strict_object" && issue.input === undefined) {
          throw new AdminUsageError(`missing argument ${path}`);
        }
        throw new AdminUsageError(path ? `${path}: ${issue.message}` : issue.message);
      }
      return (deps) => command.run(parsed.output, deps);
    },
  };
}

/**
 * `--name value` and `--name=value`, or a bare `--name` for a switch ("on"); a repeated option,
 * or a bare one that is not a switch, is a usage error.
 */
export function parseOptions(
  args: readonly string[],
  switches: readonly string[] = [],
): Record<string, string> {
  const options: Record<string, string> = Object.create(null);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = arg.match(/^--([a-z][a-z-]*)(?:=(.*))?$/s);
    if (!match) throw new AdminUsageError(`unexpected argument "${arg}"`);
    const name = match[1]!;
    let value = match[2];
    if (value === undefined && switches.includes(name)) value = "on";
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new AdminUsageError(`--${name} needs a value`);
    }
    if (Object.hasOwn(options, name)) throw new AdminUsageError(`--${name} is given twice`);
    options[name] = value;
  }
  return options;
}

/** Ends grants, each with an operator entry in its business's audit log, in one commit each. */
export async function revokeGrants(
  { store, now }: AdminDeps,
  grants: readonly GrantRecord[],
  action: string,
): Promise<void> {
  const audit = createAuditLog(store, now);
  for (const grant of grants) {
    await revokeGrantWithAudit(store, audit, grant, {
      actor: "operator",
      action,
      summary: `revoked the access of ${grant.clientName} (${grant.clientId})`,
    });
  }
}
