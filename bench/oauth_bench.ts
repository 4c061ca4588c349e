/**
 * OAuth section: authorization-code exchanges/s and refreshes/s over HTTP against the
 * token endpoint of a server process (bench/oauth_server.ts, rate limits off), and
 * access-token verifications/s of the resource server's verifier in this process (no HTTP:
 * signature, claims and the grant lookup in the store).
 * Each exchange spends a distinct pre-issued code; each connection refreshes its own
 * chain, so every refresh rotates (compare-and-set, sealed answer, new JWT). The token endpoint
 * is measured on Deno KV in memory and on PostgreSQL (bench/stores.ts).
 */
import { resolveConfig } from "../src/config/config.ts";
import { createAccessTokenVerifier } from "../src/oauth/access_token.ts";
import { createSigningKeys } from "../src/oauth/signing_keys.ts";
import { issueGrant } from "../testkit/issue_grant.ts";
import { openKvStore } from "../src/store/kv_store.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";
import { driveForms, type FormsMeasured as Measured } from "./load.ts";
import { type BenchStore, onEachStore } from "./stores.ts";

interface Prepared {
  readonly clientId: string;
  readonly verifier: string;
  readonly codes: string[];
  readonly refreshTokens: string[];
}

/** Codes issued up front: more than the server can exchange in the run (60 s lifetime). */
const CODES_PER_SECOND = 3_000;

export default {
  name: "oauth",
  async run({ seconds, connections }) {
    const rows = (await onEachStore((store) => _tokenEndpoint(store, seconds, connections)))
      .flat();
    const verification = await _verifications(seconds);
    rows.push(["access-token verification, new token", ..._cells(verification.cold)]);
    rows.push(["access-token verification, same token", ..._cells(verification.warm)]);
    console.log(
      `token endpoint: Deno client, ${connections} connections, ${seconds}s per run; ` +
        `verification: in process, one loop\n`,
    );
    console.log(table(["operation", "per second", "p99 ms", "errors"], rows));
  },
} satisfies BenchSection;

async function _tokenEndpoint(
  store: BenchStore,
  seconds: number,
  connections: number,
): Promise<string[][]> {
  const [base, auth, api] = freePorts(3);
  const dir = await Deno.makeTempDir({ prefix: "vestibule-oauth-bench-" });
  const codeCount = CODES_PER_SECOND * seconds;
  const env = {
    VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
    VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
    VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
    VESTIBULE_DATA: await store.data(),
    VESTIBULE_RATE_LIMITS: "off",
  };
  const server = await startServerProcess({
    command: [
      Deno.execPath(),
      "run",
      "-A",
      "bench/oauth_server.ts",
      `${dir}/prepared.json`,
      String(codeCount),
      String(connections),
    ],
    env,
    readyUrl: `http://127.0.0.1:${base}/health`,
  });
  const rows: string[][] = [];
  try {
    const prepared: Prepared = JSON.parse(await Deno.readTextFile(`${dir}/prepared.json`));
    const tokenUrl = `http://127.0.0.1:${auth}/api/auth/oauth2/token`;
    const codes = [...prepared.codes];
    const exchanges = await driveForms(seconds, connections, () => {
      const code = codes.pop();
      if (code === undefined) return null;
      return new URLSearchParams({
        grant_type: "authorization_code",
        code,
        redirect_uri: "http://127.0.0.1/cb",
        client_id: prepared.clientId,
        code_verifier: prepared.verifier,
        resource: env.VESTIBULE_API_URL,
      });
    }, tokenUrl);
    if (codes.length === 0) console.log(`note: all ${codeCount} codes were spent before the end`);
    rows.push([`code exchange (HTTP, ${store.name})`, ..._cells(exchanges)]);

    const chains = [...prepared.refreshTokens];
    let next = 0;
    const refreshes = await driveForms(
      seconds,
      connections,
      (answer, lane) => {
        if (answer?.refresh_token) chains[lane] = String(answer.refresh_token);
        return new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: chains[lane]!,
          client_id: prepared.clientId,
        });
      },
      tokenUrl,
      () => next++,
    );
    rows.push([`refresh with rotation (HTTP, ${store.name})`, ..._cells(refreshes)]);
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
  return rows;
}

function _cells(m: Measured): string[] {
  return [m.perSecond.toFixed(0), m.p99Ms.toFixed(2), String(m.errors)];
}

/**
 * The verifier the workspace uses: distinct tokens (each one's first sight: ECDSA, claims,
 * grant lookup), then one token back to back (signature remembered; expiry and grant still
 * checked every time).
 */
async function _verifications(seconds: number): Promise<{ cold: Measured; warm: Measured }> {
  const config = resolveConfig({
    VESTIBULE_AUTH_URL: "http://127.0.0.1:8001",
    VESTIBULE_API_URL: "http://127.0.0.1:8002",
  });
  const store = await openKvStore(":memory:");
  try {
    const tokens: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const issued = await issueGrant({ config, store, now: Date.now }, {
        // One grant per account, business and client: a shared account would keep one alive.
        accountId: `bench-${i}`,
        businessId: "bench",
        clientId: "bench",
        scopes: ["app.access"],
      });
      tokens.push(issued.tokens.access_token);
    }
    const verify = createAccessTokenVerifier({
      keys: createSigningKeys({ store, now: Date.now }),
      store,
      now: Date.now,
      issuer: `${config.authUrl}/api/auth`,
      audience: config.apiUrl,
    });
    const cold = await _loop(tokens.length / 10, (i) => verify(tokens[i]!), tokens.length);
    const warm = await _loop(seconds, () => verify(tokens[0]!));
    return { cold, warm };
  } finally {
    store.close();
  }
}

/** Calls `op` back to back for `seconds` (or `limit` times), timing each call. */
async function _loop(
  seconds: number,
  op: (i: number) => Promise<{ ok: boolean }>,
  limit = Infinity,
): Promise<Measured> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  for (let i = 0; i < limit && performance.now() < deadline; i++) {
    const t0 = performance.now();
    if (!(await op(i)).ok) errors++;
    latencies.push(performance.now() - t0);
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / elapsed,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    errors,
  };
}
