// The admin subcommands: operator actions on the store, with no HTTP and no browser. Each
// topic keeps its commands in a file of its own; this is the table, the usage and the runner.
import { AccountsError } from "../../accounts/accounts.ts";
import { BackupError } from "../../store/backup.ts";
import { maskDataUrl } from "../../config/data_url.ts";
import { StoreBusyError, StoreUnavailableError } from "../../store/store.ts";
import { adminJson } from "./admin_output.ts";

import {
  type AdminDeps,
  AdminError,
  AdminUsageError,
  parseOptions,
  type Runnable,
} from "./command.ts";
import { BUSINESS_COMMANDS } from "./business_commands.ts";
import { ACCESS_COMMANDS } from "./access_commands.ts";
import { LOG_COMMANDS } from "./log_commands.ts";
import { OUTBOX_COMMANDS } from "./outbox_commands.ts";
import { STORE_COMMANDS } from "./store_commands.ts";
import { UPSTREAM_COMMANDS } from "./upstream_commands.ts";
import { CHECK_COMMANDS } from "./check_commands.ts";

/** In the order `help` lists them. */
const COMMANDS: Readonly<Record<string, Runnable>> = {
  ...BUSINESS_COMMANDS,
  ...ACCESS_COMMANDS,
  ...LOG_COMMANDS,
  ...OUTBOX_COMMANDS,
  ...STORE_COMMANDS,
  ...UPSTREAM_COMMANDS,
  ...CHECK_COMMANDS,
};

export function adminUsage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.summary}`);
  return [
    "Usage: vestibule admin [--data=PATH] COMMAND [OPTIONS]   (or: deno task admin …)",
    "The store is VESTIBULE_DATA (or --data); configuration flags go before COMMAND.",
    "",
    "Commands:",
    ...lines,
  ].join("\n");
}

/**
 * A command line read before any store is opened: the exit status it already decided (usage,
 * help, an unknown command, a wrong option), or the command to run on the store.
 */
export type AdminInvocation =
  | { readonly status: number }
  | { readonly run: (deps: AdminDeps) => Promise<number> };

/** Reads one command line: what to run, or its exit status (2 usage, 0 help) with what it said. */
export function readAdminCommand(
  args: readonly string[],
  print: Pick<AdminDeps, "out" | "err">,
): AdminInvocation {
  const [name, ...rest] = args;
  if (name === undefined || name === "help" || name === "--help") {
    (name === undefined ? print.err : print.out)(adminUsage());
    return { status: name === undefined ? 2 : 0 };
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    print.err(`vestibule admin: unknown command "${name}"\n\n${adminUsage()}`);
    return { status: 2 };
  }
  const command = COMMANDS[name]!;
  if (rest.includes("--help")) {
    print.out(`Usage: vestibule admin ${command.usage}\n${command.summary}`);
    return { status: 0 };
  }
  const usageError = (error: AdminUsageError) => {
    print.err(`vestibule admin ${name}: ${error.message}\nUsage: ${command.usage}`);
    return 2;
  };
  let execute: (deps: AdminDeps) => Promise<unknown>;
  try {
    execute = command.prepare(parseOptions(rest, command.switches));
  } catch (error) {
    if (error instanceof AdminUsageError) return { status: usageError(error) };
    throw error;
  }
  return {
    async run(deps) {
      try {
        const result = await execute(deps);
        // A command that wrote its own output (export) returns nothing more to print.
        if (result !== undefined) deps.out(adminJson(result));
        return 0;
      } catch (error) {
        if (error instanceof AdminUsageError) return usageError(error);
        if (error instanceof StoreUnavailableError) {
          // The database stopped answering mid-command (its deadline, or the connection lost).
          deps.err(
            `vestibule admin ${name}: VESTIBULE_DATA=${
              JSON.stringify(maskDataUrl(deps.config.dataPath))
            } does not answer (${error.message}); try again`,
          );
          return 1;
        }
        if (error instanceof StoreBusyError) {
          // The server (or another command) kept the store locked through every retry.
          deps.err(`vestibule admin ${name}: ${error.message}; try again`);
          return 1;
        }
        if (
          !(error instanceof AdminError || error instanceof AccountsError ||
            error instanceof BackupError)
        ) throw error;
        deps.err(`vestibule admin ${name}: ${error.message}`);
        return 1;
      }
    },
  };
}

/** Runs one command; the exit status: 0 done, 1 refused (not found), 2 usage. */
export async function runAdminCommand(args: readonly string[], deps: AdminDeps): Promise<number> {
  const invocation = readAdminCommand(args, deps);
  return "status" in invocation ? invocation.status : await invocation.run(deps);
}
