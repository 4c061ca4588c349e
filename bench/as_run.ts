/**
 * Vestibule as users run it, for the sections that measure it so: `deno task start`'s very
 * command and permissions (read from deno.json), and the KV file it opens seeded beforehand
 * with an account, a business and an access token of the given scopes.
 */
import { createAccounts } from "../src/accounts/accounts.ts";
import { resolveConfig } from "../src/config/config.ts";
import { prepareSchema } from "../src/schema.ts";
import { openStore } from "../src/store/open.ts";
import { issueGrant, registerPublicClient } from "../testkit/issue_grant.ts";
import type { BenchRuntime } from "./main.ts";
import { driveForms } from "./load.ts";
import type { ServerProcess } from "./processes.ts";

const ROOT = new URL("../", import.meta.url);

/**
 * `deno task start` as deno.json says, with this Deno; or on Node.js `npm start` as
 * package.json says, with the `node` of TEST_NODE_BINARY (as the tests) or the one on PATH.
 */
export async function startTaskCommand(runtime: BenchRuntime = "deno"): Promise<string[]> {
  if (runtime === "node") {
    const pkg = JSON.parse(await Deno.readTextFile(new URL("package.json", ROOT)));
    // npm start's command, less npm: its launcher becomes the server in the same process.
    const [node, ...rest] = (pkg.scripts.start as string).split(/\s+/);
    if (node !== "node") throw new Error(`npm start does not run node: ${pkg.scripts.start}`);
    return [nodeBinary(), ...rest];
  }
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const [deno, ...rest] = (config.tasks.start as string).split(/\s+/);
  if (deno !== "deno") throw new Error(`the start task does not run deno: ${config.tasks.start}`);
  return [Deno.execPath(), ...rest];
}

export function nodeBinary(): string {
  return Deno.env.get("TEST_NODE_BINARY") ?? "node";
}

/**
 * A new store file inside data/ (the one folder the start task may write), of the runtime's
 * default embedded store: Deno KV on Deno, SQLite on Node.js.
 */
export function benchDataPath(runtime: BenchRuntime): string {
  return `data/bench-${crypto.randomUUID()}.${runtime === "node" ? "sqlite" : "kv"}`;
}

/**
 * Creates the store file `env.VESTIBULE_DATA` (a path inside data/, the one folder the start
 * task may write; Deno KV or SQLite by its name) with an account, a business and a grant of
 * `scopes`; its access token.
 */
export async function seedStore(
  env: Readonly<Record<string, string>>,
  scopes: readonly string[],
): Promise<string> {
  const config = resolveConfig(env);
  await Deno.mkdir(new URL("data/", ROOT), { recursive: true });
  const store = await openStore({
    ...config,
    dataPath: new URL(env.VESTIBULE_DATA!, ROOT).pathname,
  });
  try {
    await prepareSchema(store, Date.now);
    const { account, business } = await createAccounts(store, Date.now)
      .createAccountWithBusiness("bench@example.com", "Bench");
    const { tokens } = await issueGrant({ config, store, now: Date.now }, {
      accountId: account.id,
      businessId: business.id,
      clientId: "bench-client",
      scopes,
    });
    return tokens.access_token;
  } finally {
    store.close();
  }
}

/**
 * A registered public client and `count` refresh tokens of it in the store file
 * `env.VESTIBULE_DATA`, each of its own member account (a grant is one per account, business and
 * client, so concurrent refreshes do not replace each other's grant): each chain rotates.
 */
export async function seedRefreshChains(
  env: Readonly<Record<string, string>>,
  count: number,
): Promise<{ readonly clientId: string; readonly refreshTokens: string[] }> {
  const config = resolveConfig(env);
  const store = await openStore({
    ...config,
    dataPath: new URL(env.VESTIBULE_DATA!, ROOT).pathname,
  });
  try {
    const accounts = createAccounts(store, Date.now);
    const { business } = await accounts.createAccountWithBusiness("chains@example.com", "Chains");
    const client = await registerPublicClient({ config, store, now: Date.now }, {
      clientName: "Bench client",
      redirectUri: "http://127.0.0.1/cb",
      refresh: true,
    });
    const refreshTokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const { accountId } = await accounts.addMember(
        business.id,
        `chain-${i}@example.com`,
        "member",
      );
      const { tokens } = await issueGrant({ config, store, now: Date.now }, {
        accountId,
        businessId: business.id,
        clientId: client.clientId,
        scopes: ["app.access"],
        refresh: true,
      });
      refreshTokens.push(tokens.refresh_token!);
    }
    return { clientId: client.clientId, refreshTokens };
  } finally {
    store.close();
  }
}

/** Removes the store file and its companions. */
export async function removeStore(env: Readonly<Record<string, string>>): Promise<void> {
  for (const suffix of ["", "-shm", "-wal"]) {
    await Deno.remove(new URL(env.VESTIBULE_DATA + suffix, ROOT)).catch(() => {});
  }
}

/** Lines a request log holds. */
export async function logLines(file: string): Promise<number> {
  const bytes = await Deno.readFile(file);
  return bytes.reduce((n, byte) => byte === 10 ? n + 1 : n, 0);
}

/** The machine's load average (1, 5, 15 minutes): how shared it was during the run. */
export async function loadAverage(): Promise<string> {
  try {
    return (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

/**
 * Refreshes with rotation at the token endpoint, each connection its own chain; with
 * Vestibule's CPU time per refresh. The client is fetch in this bench's own process.
 */
export async function measureRefreshes(
  server: ServerProcess,
  authOrigin: string,
  chains: { readonly clientId: string; readonly refreshTokens: readonly string[] },
  seconds: number,
  connections: number,
) {
  const tokens = [...chains.refreshTokens];
  let next = 0;
  const cpuBefore = await server.cpuSeconds();
  const measured = await driveForms(
    seconds,
    connections,
    (answer, lane) => {
      if (answer?.refresh_token) tokens[lane] = String(answer.refresh_token);
      return new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: tokens[lane]!,
        client_id: chains.clientId,
      });
    },
    `${authOrigin}/api/auth/oauth2/token`,
    () => next++,
  );
  const cpu = await server.cpuSeconds() - cpuBefore;
  return { ...measured, cpuMicros: (cpu / (measured.perSecond * seconds)) * 1e6 };
}
