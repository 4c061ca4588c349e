// The admin subcommands: operator actions on the store, with no HTTP and no browser.
import * as v from "valibot";
import { AccountsError, createAccounts } from "../accounts/accounts.ts";
import { BusinessNameSchema, EmailSchema, RoleSchema } from "../accounts/schemas.ts";
import type { Config } from "../config.ts";
import { nearestName } from "../nearest_name.ts";
import { createMetadataDocuments } from "../oauth/cimd.ts";
import { type Clients, createClients } from "../oauth/clients.ts";
import { issuerOf } from "../oauth/issuer.ts";
import {
  getGrant,
  listGrantsOfAccount,
  listGrantsOfClient,
  revokeClientGrants,
  revokeGrant,
} from "../oauth/grants.ts";
import { createSigningKeys } from "../oauth/signing_keys.ts";
import { sendTestMail } from "../mail/test_message.ts";
import { createOutbox, type Delivery } from "../outbox/outbox.ts";
import { type Store, StoreBusyError } from "../store/store.ts";
import { createAuditLog } from "../workspace/audit.ts";

export interface AdminDeps {
  readonly config: Config;
  readonly store: Store;
  readonly now: () => number;
  /** Results, one JSON document per command. */
  readonly out: (text: string) => void;
  /** Errors and usage. */
  readonly err: (text: string) => void;
}

/** A refusal worth a one-line message and exit status 1 (not found, nothing to do). */
class AdminError extends Error {}

/** A malformed command line: the message, the command's usage and exit status 2. */
export class AdminUsageError extends Error {}

/** Registered clients; metadata-document clients are not stored, so nothing is fetched here. */
function _clients({ config, store, now }: AdminDeps): Clients {
  return createClients({
    store,
    now,
    documents: createMetadataDocuments({ config, now }),
    issuer: issuerOf(config),
  });
}

const IdSchema = v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty"));

interface Command<S extends v.GenericSchema<unknown, unknown>> {
  readonly usage: string;
  readonly summary: string;
  readonly options: S;
  readonly run: (options: v.InferOutput<S>, deps: AdminDeps) => Promise<unknown>;
}

/** What the dispatcher needs of a command; options are parsed by the command's own schema. */
interface Runnable {
  readonly usage: string;
  readonly summary: string;
  execute(options: Record<string, string>, deps: AdminDeps): Promise<unknown>;
}

function _command<S extends v.GenericSchema<unknown, unknown>>(command: Command<S>): Runnable {
  return {
    usage: command.usage,
    summary: command.summary,
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
      return await createAccounts(store, now).addMember(business, email, role);
    },
  }),
  "list-businesses": _command({
    usage: "list-businesses --email EMAIL",
    summary: "The businesses of an account, with its role and the members of each.",
    options: v.strictObject({ email: EmailSchema }),
    async run({ email }, { store, now }) {
      const accounts = createAccounts(store, now);
      const account = await accounts.findAccountByEmail(email);
      if (!account) throw new AdminError(`No account with e-mail "${email}"`);
      const businesses = await accounts.listBusinessesOf(account.id);
      return {
        account,
        businesses: await Promise.all(businesses.map(async ({ business, role }) => ({
          business,
          role,
          members: (await accounts.listMembers(business.id)).map((m) => ({
            email: m.account.email,
            accountId: m.account.id,
            role: m.role,
          })),
        }))),
      };
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
    summary: "Live grants of a client, or of an account.",
    options: v.pipe(
      v.strictObject({ client: v.optional(IdSchema), email: v.optional(EmailSchema) }),
      v.check(
        (o) => (o.client === undefined) !== (o.email === undefined),
        "give --client or --email",
      ),
    ),
    async run({ client, email }, { store, now }) {
      if (client !== undefined) return { grants: await listGrantsOfClient(store, client) };
      const account = await createAccounts(store, now).findAccountByEmail(email!);
      if (!account) throw new AdminError(`No account with e-mail "${email}"`);
      return { grants: await listGrantsOfAccount(store, account.id) };
    },
  }),
  "revoke-grant": _command({
    usage: "revoke-grant --grant GRANT_ID",
    summary: "Revoke one grant: its access and refresh tokens stop working.",
    options: v.strictObject({ grant: IdSchema }),
    async run({ grant }, { store }) {
      const found = await getGrant(store, grant);
      if (!found || !(await revokeGrant(store, grant))) {
        throw new AdminError(`No live grant with id "${grant}"`);
      }
      return { revoked: grant, clientId: found.clientId, accountId: found.accountId };
    },
  }),
  "revoke-client": _command({
    usage: "revoke-client --client CLIENT_ID",
    summary: "Revoke every grant of a client and delete its registration.",
    options: v.strictObject({ client: IdSchema }),
    async run({ client }, deps) {
      const revokedGrants = await revokeClientGrants(deps.store, client);
      const registrationDeleted = await _clients(deps).deleteRegistered(client);
      if (revokedGrants === 0 && !registrationDeleted) {
        throw new AdminError(`No registration or live grant for client "${client}"`);
      }
      return { clientId: client, revokedGrants, registrationDeleted };
    },
  }),
  "audit-log": _command({
    usage: "audit-log --business ID [--limit N]",
    summary:
      "The business's audit log, newest first: agent tool calls that changed something and human decisions.",
    options: v.strictObject({
      business: IdSchema,
      limit: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^\d+$/, "must be a whole number"),
          v.transform(Number),
          v.minValue(1, "must be at least 1"),
          v.maxValue(1000, "must be at most 1000"),
        ),
        "100",
      ),
    }),
    async run({ business, limit }, { store, now }) {
      return { entries: await createAuditLog(store, now).list(business, { limit }) };
    },
  }),
  "rotate-signing-key": _command({
    usage: "rotate-signing-key",
    summary:
      "Sign with a new key from now on; the old one stays in the JWKS until its tokens have expired.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      return await createSigningKeys({ store, now }).rotate();
    },
  }),
  "list-outbox": _command({
    usage: "list-outbox",
    summary: "Mail waiting to be sent or that failed: recipient and subject, never the link.",
    options: v.strictObject({}),
    async run(_options, { store, now }) {
      const deliveries = await createOutbox({ store, now }).list(["pending", "sending", "failed"]);
      return { deliveries: deliveries.map(_describeDelivery) };
    },
  }),
  "retry-delivery": _command({
    usage: "retry-delivery --id ID",
    summary:
      "Send a pending or failed message again now (the server picks it up within 30 seconds).",
    options: v.strictObject({ id: IdSchema }),
    async run({ id }, { store, now }) {
      const delivery = await createOutbox({ store, now }).retryNow(id);
      if (!delivery) throw new AdminError(`No pending or failed delivery with id "${id}"`);
      return { delivery: _describeDelivery(delivery) };
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

/** `--name value` and `--name=value`; a repeated or bare option is a usage error. */
export function parseOptions(args: readonly string[]): Record<string, string> {
  const options: Record<string, string> = Object.create(null);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = arg.match(/^--([a-z][a-z-]*)(?:=(.*))?$/s);
    if (!match) throw new AdminUsageError(`unexpected argument "${arg}"`);
    const name = match[1]!;
    let value = match[2];
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
  try {
    deps.out(JSON.stringify(await command.execute(parseOptions(rest), deps), null, 2));
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
    if (!(error instanceof AdminError || error instanceof AccountsError)) throw error;
    deps.err(`vestibule admin ${name}: ${error.message}`);
    return 1;
  }
}
