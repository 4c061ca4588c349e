// A receiver for the events tests: records every request on loopback and answers with the
// status a test sets; plus a signing secret in an owner-only file.
import { Webhook } from "npm:standardwebhooks@^1.1.1";

export interface ReceivedEvent {
  readonly id: string;
  readonly type: string;
  readonly timestamp: string;
  // deno-lint-ignore no-explicit-any
  readonly data: Record<string, any>;
}

export interface TestReceiver {
  readonly url: string;
  readonly secret: string;
  /** VESTIBULE_WEBHOOK_URL and VESTIBULE_WEBHOOK_SECRET_FILE for the server. */
  readonly env: Record<string, string>;
  /** Requests answered 2xx, verified with the standardwebhooks library, in arrival order. */
  readonly accepted: ReceivedEvent[];
  /** How many requests arrived, answered or not. */
  attempts(): number;
  /** The status to answer from now on. */
  answer(status: number): void;
  /** Resolves once `count` events were accepted; rejects after a generous deadline. */
  waitFor(count: number): Promise<ReceivedEvent[]>;
  close(): Promise<void>;
}

export async function tempWebhookSecret(): Promise<{ secret: string; file: string }> {
  const secret = `whsec_${
    btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
  }`;
  const file = await Deno.makeTempFile({ prefix: "vestibule-webhook-secret-" });
  await Deno.chmod(file, 0o600);
  await Deno.writeTextFile(file, `${secret}\n`);
  return { secret, file };
}

/** `delayMs`: how long each answer takes (a receiver that does real work). */
export async function startTestReceiver(
  options: { readonly delayMs?: number } = {},
): Promise<TestReceiver> {
  const { secret, file } = await tempWebhookSecret();
  const verifier = new Webhook(secret);
  const accepted: ReceivedEvent[] = [];
  let status = 200;
  let attempts = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    attempts++;
    const body = await request.text();
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    // Throws on a bad signature: the test fails with a 500 and an error in its output.
    const event = verifier.verify(body, Object.fromEntries(request.headers)) as ReceivedEvent;
    if (status >= 200 && status < 300) {
      accepted.push({ ...event, id: request.headers.get("webhook-id")! });
    }
    return new Response(null, { status });
  });
  const url = `http://127.0.0.1:${server.addr.port}/events`;
  return {
    url,
    secret,
    env: { VESTIBULE_WEBHOOK_URL: url, VESTIBULE_WEBHOOK_SECRET_FILE: file },
    accepted,
    attempts: () => attempts,
    answer: (next) => void (status = next),
    async waitFor(count) {
      for (let waited = 0; accepted.length < count; waited += 20) {
        if (waited > 30_000) {
          throw new Error(`waited for ${count} events, got ${accepted.length}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return accepted.slice(0, count);
    },
    async close() {
      await server.shutdown();
      await Deno.remove(file);
    },
  };
}
