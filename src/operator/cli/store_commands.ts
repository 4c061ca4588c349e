// Admin commands: the whole store as a backup, and back.
import * as v from "valibot";
import { exportLines, importBackup, parseBackup } from "../../store/backup.ts";
import { CURRENT_SCHEMA, readSchemaVersion } from "../../schema.ts";

import { AdminError, command, IdSchema, type Runnable } from "./command.ts";
import { runtime } from "../../runtime/current.ts";

export const STORE_COMMANDS: Readonly<Record<string, Runnable>> = {
  export: command({
    usage: "export [--output PATH]",
    summary:
      "The whole store as JSON lines, as it was at one moment (the server may run): to standard output, or to a new owner-only file.",
    options: v.strictObject({ output: v.optional(IdSchema) }),
    async run({ output }, { store, now, out }) {
      const lines = await exportLines(store, now, await readSchemaVersion(store));
      if (output === undefined) {
        for (const line of lines) out(line);
        return undefined;
      }
      try {
        // A new file, owner-only whatever the umask: the backup holds the signing keys.
        await runtime.writeTextFile(output, lines.join("\n") + "\n", {
          createNew: true,
          mode: 0o600,
        });
      } catch (error) {
        throw new AdminError(`cannot write --output ${output}: ${(error as Error).message}`);
      }
      return { output, records: lines.length - 1 };
    },
  }),
  import: command({
    usage: "import",
    summary: "Load a backup from standard input into an empty store (stop the server first).",
    options: v.strictObject({}),
    async run(_options, { store, now, input }) {
      if (!input) throw new AdminError("no standard input to read a backup from");
      const backup = parseBackup(await input());
      if (backup.header.schema !== null && backup.header.schema > CURRENT_SCHEMA) {
        throw new AdminError(
          `the backup is at schema version ${backup.header.schema}, newer than this release knows (${CURRENT_SCHEMA})`,
        );
      }
      const imported = await importBackup(store, backup, now);
      return { imported, skippedExpired: backup.records.length - imported };
    },
  }),
};
