// The server of the behaviour transcript (testkit/transcript.ts): main.ts of a checkout started
// with --demo on free loopback ports, with the operator listener and a file outbox.
import { freePorts } from "./ports.ts";

export interface TranscriptServer {
  /** The three origins and the operator listener, `http://127.0.0.1:PORT`. */
  readonly base: string;
  readonly auth: string;
  readonly api: string;
  readonly admin: string;
  /** The operator listener's bearer token. */
  readonly adminToken: string;
  /** The file outbox: one JSON line per mail sent. */
  readonly mailPath: string;
  stop(): Promise<void>;
}

/** Starts main.ts of `tree` and waits until it logs that it listens. */
export async function startTranscriptServer(tree: string): Promise<TranscriptServer> {
  const [pb, pa, pi, pad] = freePorts(4);
  const base = `http://127.0.0.1:${pb}`,
    auth = `http://127.0.0.1:${pa}`,
    api = `http://127.0.0.1:${pi}`;
  const admin = `http://127.0.0.1:${pad}`;
  const dir = await Deno.makeTempDir();
  const mailPath = `${dir}/outbox.jsonl`;
  const tokenFile = `${dir}/admin-token`;
  const adminToken = "t".repeat(48);
  await Deno.writeTextFile(tokenFile, adminToken, { mode: 0o600 });
  const child = new Deno.Command("deno", {
    args: ["run", "-A", "--unstable-kv", "main.ts", "--demo"],
    cwd: tree,
    env: {
      VESTIBULE_BASE_URL: base,
      VESTIBULE_AUTH_URL: auth,
      VESTIBULE_API_URL: api,
      VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${pad}`,
      VESTIBULE_ADMIN_TOKEN_FILE: tokenFile,
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_MAIL: `file:${mailPath}`,
      VESTIBULE_RATE_LIMITS: "off",
      VESTIBULE_TRUSTED_ORIGINS: "https://console.example.com",
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes('"listening"')) {
    const { value, done } = await lines.read();
    if (done) throw new Error("server ended: " + buffer);
    buffer += value;
  }
  (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    base,
    auth,
    api,
    admin,
    adminToken,
    mailPath,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}
