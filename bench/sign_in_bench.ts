/**
 * Sign-in section: latency of POST {auth_url}/sign-in for an address that has an account
 * against one that has none. The page is the same either way; the time to answer must not
 * tell them apart either. The server (bench/vestibule_server.ts, rate limits off) keeps its
 * store in a KV file and its mail in a `file:` outbox, as `deno task start` would, and the
 * form is posted the way a browser posts it: with the CSRF cookie and hidden field from
 * GET /sign-in. One request at a time, known and unknown alternating, so load from other work
 * falls on both alike.
 */
import { createAccounts } from "../src/accounts/accounts.ts";
import { openKvStore } from "../src/store/kv_store.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";

const KNOWN = "known@example.com";
const UNKNOWN = "unknown@example.com";
const WARM_UP = 50;

export default {
  name: "sign-in",
  async run({ seconds }) {
    const dir = await Deno.makeTempDir({ prefix: "vestibule-sign-in-bench-" });
    const [base, auth, api] = freePorts(3);
    const authUrl = `http://127.0.0.1:${auth}`;
    const store = await openKvStore(`${dir}/vestibule.kv`);
    await createAccounts(store, Date.now).createAccountWithBusiness(KNOWN, "Known Ltd");
    store.close();
    const server = await startServerProcess({
      command: [Deno.execPath(), "run", "-A", "bench/vestibule_server.ts"],
      env: {
        VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
        VESTIBULE_AUTH_URL: authUrl,
        VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
        VESTIBULE_DATA: `${dir}/vestibule.kv`,
        VESTIBULE_MAIL: `file:${dir}/outbox.jsonl`,
        VESTIBULE_RATE_LIMITS: "off",
      },
      readyUrl: `http://127.0.0.1:${base}/health`,
    });
    const latencies: Record<string, number[]> = { [KNOWN]: [], [UNKNOWN]: [] };
    let errors = 0;
    try {
      const form = await fetch(`${authUrl}/sign-in`);
      const html = await form.text();
      const cookie = form.headers.getSetCookie()[0]!.split(";")[0]!;
      const csrf = /name="csrf" value="([^"]*)"/.exec(html)![1]!;
      const post = async (email: string) => {
        const started = performance.now();
        const response = await fetch(`${authUrl}/sign-in`, {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            Cookie: cookie,
            Origin: authUrl,
          },
          body: new URLSearchParams({ csrf, email }),
        });
        await response.arrayBuffer();
        if (response.status !== 200) errors++;
        return performance.now() - started;
      };
      for (let i = 0; i < WARM_UP; i++) await post(i % 2 === 0 ? KNOWN : UNKNOWN);
      const deadline = performance.now() + seconds * 1000;
      // Which address goes first changes every pair: neither profits from the order.
      for (let pair = 0; performance.now() < deadline; pair++) {
        for (const email of pair % 2 === 0 ? [KNOWN, UNKNOWN] : [UNKNOWN, KNOWN]) {
          latencies[email]!.push(await post(email));
        }
      }
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
    if (errors > 0) throw new Error(`${errors} sign-in requests were not answered 200`);
    const rows = [KNOWN, UNKNOWN].map((email) => {
      const sorted = latencies[email]!.sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
      return [email, String(sorted.length), at(0.5).toFixed(3), at(0.9).toFixed(3)];
    });
    console.log(
      `POST /sign-in, one request at a time, alternating, ${seconds}s; KV file, file: outbox\n`,
    );
    console.log(table(["address", "requests", "median ms", "p90 ms"], rows));
    const [known, unknown] = rows.map((row) => Number(row[2]));
    console.log(`\nmedian known / unknown: ${(known! / unknown!).toFixed(2)}`);
  },
} satisfies BenchSection;
