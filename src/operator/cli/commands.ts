// The admin subcommands: operator actions on the store, with no HTTP and no browser.
import * as v from "valibot";
import { AccountsError, createAccounts } from "../../accounts/accounts.ts";
import type { Accounts, Business } from "../../accounts/model.ts";
import { BusinessNameSchema, EmailSchema, RoleSchema } from "../../accounts/schemas.ts";
import type { Config } from "../../config/config.ts";
import { nearestName } from "../../nearest_name.ts";
import { UNLIMITED } from "../../http/rate_limiter.ts";
import { createMetadataDocuments } from "../../oauth/cimd.ts";
import { type Clients, createClients } from "../../oauth/clients.ts";
import { issuerOf } from "../../oauth/issuer.ts";
import {
  getGrant,
  type GrantRecord,
  grantsOfAccount,
  listGrantsOfClient,
} from "../../oauth/grants.ts";
import { createSigningKeys } from "../../oauth/signing_keys.ts";
import { sendTestMail } from "../../mail/test_message.ts";
import { createOutbox, type Delivery } from "../../outbox/outbox.ts";
import { BackupError, exportLines, importBackup, parseBackup } from "../../store/backup.ts";
import { CURRENT_SCHEMA, readSchemaVersion } from "../../store/schema.ts";
import { type Store, StoreBusyError } from "../../store/store.ts";
import { createAuditLog, operatorEntry } from "../../workspace/domain/audit.ts";
import { revokeGrantWithAudit } from "../../workspace/domain/grant_revocation.ts";
import { formatFinding, liveChecks, offlineChecks } from "./doctor.ts";
import { deleteAccount, deleteBusiness, type ErasureDeps } from "./erasure.ts";
import { appendOperatorLog, listOperatorLog } from "./operator_log.ts";

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
  /** The VESTIBULE_* variables (check warns of unknown ones); none by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A refusal worth a one-line message and exit status 1 (not found, nothing to do). */
class AdminError extends Error {}

/** A malformed command line: the message, the command's usage and exit status 2. */
export class AdminUsageError extends Error {}

/** Registered clients; metadata-document clients are not stored, so nothing is fetched here. */
/** `--limit N` of the log commands: 1 to 1000, 100 when absent. */
const LimitSchema = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(1, "must be at least 1"),
    v.maxValue(1000, "must be at most 1000"),
  ),
  "100",
);

function _clients({ config, store, now }: AdminDeps): Clients {
  return createClients({
    store,
    now,
    documents: createMetadataDocuments({ config, now, budget: UNLIMITED }),
    issuer: issuerOf(config),
  });
}

function _erasure({ store, now }: AdminDeps): ErasureDeps {
  return { store, accounts: createAccounts(store, now), audit: createAuditLog(store, now) };
}

/** Ends grants, each with an operator entry in its business's audit log, in one commit each. */
async function _revokeGrants(
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

/** One shape for a grant, whichever way it was found. */
function _describeGrant(grant: GrantRecord) {
  return {
    grantId: grant.id,
    accountId: grant.accountId,
    businessId: grant.businessId,
    clientId: grant.clientId,
    clientName: grant.clientName,
    scopes: grant.scopes,
    resource: grant.resource,
    offline: grant.offline,
    createdAt: new Date(grant.createdAt).toISOString(),
  };
}

/** One shape for a business: the record and its members. */
async function _describeBusiness(accounts: Accounts, business: Business) {
  return {
    business,
    members: (await accounts.listMembers(business.id)).map((m) => ({
      email: m.account.email,
      accountId: m.account.id,
      role: m.role,
    })),
  };
}

const IdSchema = v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty"));

interface Command<S extends v.GenericSchema<unknown, unknown>> {
  readonly usage: string;
  readonly summary: string;
  /** Options given bare, without a value (`--live`); parsed as "on". */
  readonly switches?: readonly string[];
  readonly options: S;
  readonly run: (options: v.InferOutput<S>, deps: AdminDeps) => Promise<unknown>;
}

/** What the dispatcher needs of a command; options are parsed by the command's own schema. */
interface Runnable {
  readonly usage: string;
  readonly summary: string;
  readonly switches: readonly string[];
  execute(options: Record<string, string>, deps: AdminDeps): Promise<unknown>;
}

function _command<S extends v.GenericSchema<unknown, unknown>>(command: Command<S>): Runnable {
  return {
    usage: command.usage,
    summary: command.summary,
    switches: command.switches ?? [],
    async execute(options, deps) {
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
      return await command.run(parsed.output, deps);
    },
  };
}

const COMMANDS: Readonly<Record<string, Runnable>> = {
  "create-business": _command({
    usage: "create-business --owner EMAIL --name NAME",
    summary: "Create a business owned by EMAIL (the account is created when new).",
    options: v.strictObject({ owner: EmailSchema, name: BusinessNameSchema }),
    async run({ owner, name }, { store, now }) {
      const created = await createAccounts(store, now).createAccountWithBusiness(owner, name);
      await createAuditLog(store, now).append(operatorEntry(
        created.business.id,
        created.account.id,
        "create-business",
        `created the business with ${created.account.email} as owner`,
      ));
      return { account: created.account, business: created.business };
    },
  }),
  "add-member": _command({
    usage: "add-member --business ID --email EMAIL [--role member|owner]",
    summary: "Add EMAIL to a business (or change its role); the account is created when new.",
    options: v.strictObject({
      business: IdSchema,
      email: EmailSchema,
      role: v.optional(RoleSchema, "member"),
    }),
    async run({ business, email, role }, { store, now }) {
      const accounts = createAccounts(store, now);
      if (!(await accounts.getBusiness(business))) {
        throw new AdminError(`No business with id "${business}"`);
      }
      // The roster's own plan, as on the members page: the only owner cannot be demoted.
      const known = await accounts.findAccountByEmail(email);
      const member = known && await accounts.getMembership(known.id, business);
      const change = member ? "change_role" : "invite";
      const plan = await accounts.planMembershipChange(business, { change, email, role });
      if (!plan.ok) throw new AdminError(plan.reason);
      if (!(await store.commit(plan.checks, plan.mutations))) {
        throw new AdminError("the members changed meanwhile; try again");
      }
      const account = (await accounts.findAccountByEmail(email))!;
      await createAuditLog(store, now).append(operatorEntry(
        business,
        account.id,
        "add-member",
        `made ${account.email} a member with role ${role}`,
      ));
      return { accountId: account.id, businessId: business, role };
    },
  }),
  "remove-member": _command({
    usage: "remove-member --business ID --email EMAIL",
    summary:
      "Remove EMAIL from a business and revoke its grants there; the last owner stays (delete-business instead).",
    options: v.strictObject({ business: IdSchema, email: EmailSchema }),
    async run({ business, email }, deps) {
      const { store, now } = deps;
      const accounts = createAccounts(store, now);
      if (!(await accounts.getBusiness(business))) {
        throw new AdminError(`No business with id "${business}"`);
      }
      const plan = await accounts.planMembershipChange(business, {
        change: "remove",
        email,
        role: "member",
      });
      if (!plan.ok) throw new AdminError(plan.reason);
      const account = (await accounts.findAccountByEmail(email))!;
      const committed = await store.commit(plan.checks, [
        ...plan.mutations,
        createAuditLog(store, now).entry(
          operatorEntry(business, account.id, "remove-member", `removed ${account.email}`),
        ),
      ]);
      if (!committed) throw new AdminError("the members changed meanwhile; try again");
      const grants = await grantsOfAccount(store, account.id, business);
      await _revokeGrants(deps, grants, "remove-member");
      return {
        removed: account.email,
        accountId: account.id,
        business,
        revokedGrants: grants.length,
      };
    },
  }),
  "list-accounts": _command({
    usage: "list-accounts",
    summary: "Every account, by e-mail, with its businesses and its role in each.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      const accounts = createAccounts(store, now);
      return {
        accounts: await Promise.all((await accounts.listAccounts()).map(async (account) => ({
          account,
          businesses: (await accounts.listBusinessesOf(account.id)).map(({ business, role }) => ({
            businessId: business.id,
            name: business.name,
            role,
          })),
        }))),
      };
    },
  }),
  "list-businesses": _command({
    usage: "list-businesses [--email EMAIL]",
    summary: "Every business (or those of one account), by name, with its members.",
    options: v.strictObject({ email: v.optional(EmailSchema) }),
    async run({ email }, { store, now }) {
      const accounts = createAccounts(store, now);
      let businesses: Business[];
      if (email === undefined) businesses = await accounts.listBusinesses();
      else {
        const account = await accounts.findAccountByEmail(email);
        if (!account) throw new AdminError(`No account with e-mail "${email}"`);
        businesses = (await accounts.listBusinessesOf(account.id)).map((b) => b.business);
      }
      return {
        businesses: await Promise.all(businesses.map((b) => _describeBusiness(accounts, b))),
      };
    },
  }),
  "delete-account": _command({
    usage: "delete-account --email EMAIL",
    summary:
      "Delete an account with its grants and sessions, and the businesses it is the only member of.",
    options: v.strictObject({ email: EmailSchema }),
    async run({ email }, deps) {
      const deletion = await deleteAccount(_erasure(deps), email);
      const businesses = deletion.deletedBusinesses.map((d) => d.business.id);
      await appendOperatorLog(
        deps.store,
        deps.now,
        "delete-account",
        `deleted account ${deletion.account.id}` +
          (businesses.length > 0 ? ` and its businesses ${businesses.join(", ")}` : ""),
      );
      return deletion;
    },
  }),
  "delete-business": _command({
    usage: "delete-business --business ID",
    summary:
      "Delete a business with its memberships, grants, records, approvals and audit log; member accounts stay.",
    options: v.strictObject({ business: IdSchema }),
    async run({ business }, deps) {
      const deletion = await deleteBusiness(_erasure(deps), business);
      // Its audit log went with it: the deletion is recorded where it outlives the business.
      await appendOperatorLog(
        deps.store,
        deps.now,
        "delete-business",
        `deleted business ${business}`,
      );
      return deletion;
    },
  }),
  "list-clients": _command({
    usage: "list-clients",
    summary: "Dynamically registered clients, with how many live grants each has.",
    options: v.strictObject({}),
    async run(_options, deps) {
      const clients = await _clients(deps).listRegistered();
      return {
        clients: await Promise.all(clients.map(async ({ secretHash, ...client }) => ({
          ...client,
          confidential: secretHash !== null,
          liveGrants: (await listGrantsOfClient(deps.store, client.clientId)).length,
        }))),
      };
    },
  }),
  "list-grants": _command({
    usage: "list-grants (--client CLIENT_ID | --email EMAIL)",
    summary: "Live grants of a client, or of an account, newest first.",
    options: v.pipe(
      v.strictObject({ client: v.optional(IdSchema), email: v.optional(EmailSchema) }),
      v.check(
        (o) => (o.client === undefined) !== (o.email === undefined),
        "give either --client or --email, not both",
      ),
    ),
    async run({ client, email }, { store, now }) {
      let grants: GrantRecord[];
      if (client !== undefined) grants = await listGrantsOfClient(store, client);
      else {
        const account = await createAccounts(store, now).findAccountByEmail(email!);
        if (!account) throw new AdminError(`No account with e-mail "${email}"`);
        grants = await grantsOfAccount(store, account.id);
      }
      grants.sort((a, b) => b.createdAt - a.createdAt);
      return { grants: grants.map(_describeGrant) };
    },
  }),
  "revoke-grant": _command({
    usage: "revoke-grant --grant GRANT_ID",
    summary: "Revoke one grant: its access and refresh tokens stop working.",
    options: v.strictObject({ grant: IdSchema }),
    async run({ grant }, deps) {
      const found = await getGrant(deps.store, grant);
      if (!found) throw new AdminError(`No live grant with id "${grant}"`);
      await _revokeGrants(deps, [found], "revoke-grant");
      return { revoked: grant, clientId: found.clientId, accountId: found.accountId };
    },
  }),
  "revoke-client": _command({
    usage: "revoke-client --client CLIENT_ID",
    summary: "Revoke every grant of a client and delete its registration.",
    options: v.strictObject({ client: IdSchema }),
    async run({ client }, deps) {
      const grants = await listGrantsOfClient(deps.store, client);
      await _revokeGrants(deps, grants, "revoke-client");
      const registrationDeleted = await _clients(deps).deleteRegistered(client);
      if (grants.length === 0 && !registrationDeleted) {
        throw new AdminError(`No registration or live grant for client "${client}"`);
      }
      return { clientId: client, revokedGrants: grants.length, registrationDeleted };
    },
  }),
  "audit-log": _command({
    usage: "audit-log --business ID [--limit N]",
    summary:
      "The business's audit log, newest first: agent tool calls that changed something and human decisions.",
    options: v.strictObject({ business: IdSchema, limit: LimitSchema }),
    async run({ business, limit }, { store, now }) {
      // A mistyped id is an error, not an empty log that looks like a quiet business.
      if (!(await createAccounts(store, now).getBusiness(business))) {
        throw new AdminError(`No business with id "${business}"`);
      }
      return { entries: await createAuditLog(store, now).list(business, { limit }) };
    },
  }),
  "rotate-signing-key": _command({
    usage: "rotate-signing-key",
    summary:
      "Sign with a new key from now on; the old one stays in the JWKS until its tokens have expired.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      const rotated = await createSigningKeys({ store, now }).rotate();
      await appendOperatorLog(store, now, "rotate-signing-key", `new signing key ${rotated.kid}`);
      return rotated;
    },
  }),
  "operator-log": _command({
    usage: "operator-log [--limit N]",
    summary:
      "Deletions and key rotations, newest first: what no business's audit log can keep (ids only).",
    options: v.strictObject({ limit: LimitSchema }),
    async run({ limit }, { store }) {
      return { entries: await listOperatorLog(store, limit) };
    },
  }),
  "list-outbox": _command({
    usage: "list-outbox [--state pending|sending|sent|failed] [--kind mail|webhook]",
    summary:
      "Mail and events waiting to be sent or that failed, oldest first (sent ones too with --state sent, kept 7 days): recipient and subject, or event type and business, never a link or a payload. An event's id is its webhook-id.",
    options: v.strictObject({
      state: v.optional(
        v.picklist(
          ["pending", "sending", "sent", "failed"],
          "must be pending, sending, sent or failed",
        ),
      ),
      kind: v.optional(v.picklist(["mail", "webhook"], "must be mail or webhook")),
    }),
    async run({ state, kind }, { store, now }) {
      const deliveries = await createOutbox({ store, now }).list(
        state === undefined ? ["pending", "sending", "failed"] : [state],
      );
      return {
        deliveries: deliveries.filter((d) => kind === undefined || d.kind === kind).map(
          _describeDelivery,
        ),
      };
    },
  }),
  "retry-delivery": _command({
    usage: "retry-delivery --id ID",
    summary:
      "Send a pending or failed message or event again now (the server picks it up within 30 seconds); a failed event goes before its business's later ones.",
    options: v.strictObject({ id: IdSchema }),
    async run({ id }, { store, now }) {
      const delivery = await createOutbox({ store, now }).retryNow(id);
      if (!delivery) throw new AdminError(`No pending or failed delivery with id "${id}"`);
      return { delivery: _describeDelivery(delivery) };
    },
  }),
  export: _command({
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
        await Deno.writeTextFile(output, lines.join("\n") + "\n", { createNew: true, mode: 0o600 });
      } catch (error) {
        throw new AdminError(`cannot write --output ${output}: ${(error as Error).message}`);
      }
      return { output, records: lines.length - 1 };
    },
  }),
  import: _command({
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
  check: _command({
    usage: "check [--live]",
    summary:
      "Check the configuration, store and mail transport (and with --live the public URLs, as an agent fetches them): one line per finding, exit 1 on a fault.",
    switches: ["live"],
    options: v.strictObject({ live: v.optional(v.literal("on", "takes no value")) }),
    async run({ live }, deps) {
      const findings = await offlineChecks({
        config: deps.config,
        env: deps.env ?? {},
        store: deps.store,
      });
      if (live) findings.push(...await liveChecks(deps.config, fetch));
      for (const finding of findings) deps.out(formatFinding(finding));
      const faults = findings.filter((f) => f.level === "fault").length;
      if (faults > 0) throw new AdminError(`${faults} fault(s)`);
      return undefined;
    },
  }),
  "mail-test": _command({
    usage: "mail-test --to EMAIL",
    summary: "Send a test message through VESTIBULE_MAIL now and report the server's answer.",
    options: v.strictObject({ to: EmailSchema }),
    async run({ to }, { config, err }) {
      const result = await sendTestMail(config, to, err);
      if (!result.sent) throw new AdminError(`not sent via ${result.transport}: ${result.error}`);
      return result;
    },
  }),
};

/** What an operator sees of a delivery: the label, never the payload (it holds the link). */
function _describeDelivery(d: Delivery) {
  return {
    id: d.id,
    kind: d.kind,
    message: d.label,
    state: d.state,
    attempts: d.attempts,
    createdAt: new Date(d.createdAt).toISOString(),
    ...(d.state === "pending" ? { nextAttemptAt: new Date(d.nextAttemptAt).toISOString() } : {}),
    ...(d.lastError === null ? {} : { lastError: d.lastError }),
  };
}

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

/** Runs one command; the exit status: 0 done, 1 refused (not found), 2 usage. */
export async function runAdminCommand(args: readonly string[], deps: AdminDeps): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "help" || name === "--help") {
    (name === undefined ? deps.err : deps.out)(adminUsage());
    return name === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    deps.err(`vestibule admin: unknown command "${name}"\n\n${adminUsage()}`);
    return 2;
  }
  const command = COMMANDS[name]!;
  if (rest.includes("--help")) {
    deps.out(`Usage: vestibule admin ${command.usage}\n${command.summary}`);
    return 0;
  }
  try {
    const result = await command.execute(parseOptions(rest, command.switches), deps);
    // A command that wrote its own output (export) returns nothing more to print.
    if (result !== undefined) deps.out(JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    if (error instanceof AdminUsageError) {
      deps.err(`vestibule admin ${name}: ${error.message}\nUsage: ${command.usage}`);
      return 2;
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
}
