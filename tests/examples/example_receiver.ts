// Runs examples/webhook_receiver.ts as the operator would, beside a test server: its own
// process, its files (the events' secret, the operator API token, the command it runs),
// and its standard output read as JSON lines.
import { tempWebhookSecret } from "../blackbox/support/webhook_receiver.ts";
import { freePorts } from "../../testkit/ports.ts";

const EXAMPLE = new URL("../../examples/webhook_receiver.ts", import.meta.url).pathname;
const LOCK = new URL("../test.lock", import.meta.url).pathname;

/** Everything the server and the example share, in a temporary folder. */
export interface Integration {
  readonly secret: string;
  /** The server's side: events to the example, the operator API on its own listener. */
  readonly serverEnv: Record<string, string>;
  readonly operatorUrl: string;
  readonly token: string;
  /** The run IDs the command was started with, one a line. */
  runs(): Promise<string[]>;
  start(): Promise<ExampleProcess>;
  remove(): Promise<void>;
}

/** One line the example logged. */
// deno-lint-ignore no-explicit-any
export type LogLine = Record<string, any>;

export interface ExampleProcess {
  readonly url: string;
  readonly lines: LogLine[];
  /** Resolves with the first line `matches` accepts; rejects after a generous deadline. */
  waitFor(what: string, matches: (line: LogLine) => boolean): Promise<LogLine>;
  stop(): Promise<void>;
}

export async function integration(): Promise<Integration> {
  const dir = await Deno.makeTempDir({ prefix: "vestibule-example-" });
  const { secret, file: secretFile } = await tempWebhookSecret();
  const token = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const tokenFile = `${dir}/operator.token`;
  await Deno.writeTextFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const command = `${dir}/run-workflow.sh`;
  await Deno.writeTextFile(
    command,
    `#!/bin/sh\necho "$RUN_ID" >> "${dir}/runs.log"\necho "refunds triaged by $WORKFLOW_ID"\n`,
    { mode: 0o700 },
  );
  const [adminPort, receiverPort] = freePorts(2);
  const operatorUrl = `http://127.0.0.1:${adminPort}`;
  const url = `http://127.0.0.1:${receiverPort}/`;
  return {
    secret,
    token,
    operatorUrl,
    serverEnv: {
      VESTIBULE_WEBHOOK_URL: url,
      VESTIBULE_WEBHOOK_SECRET_FILE: secretFile,
      VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${adminPort}`,
      VESTIBULE_ADMIN_TOKEN_FILE: tokenFile,
    },
    async runs() {
      try {
        return (await Deno.readTextFile(`${dir}/runs.log`)).trim().split("\n");
      } catch {
        return [];
      }
    },
    async start() {
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          `--lock=${LOCK}`,
          "--allow-net",
          "--allow-read",
          "--allow-env",
          "--allow-run",
          EXAMPLE,
        ],
        env: {
          RECEIVER_LISTEN: `127.0.0.1:${receiverPort}`,
          RECEIVER_SECRET_FILE: secretFile,
          RECEIVER_OPERATOR_URL: operatorUrl,
          RECEIVER_TOKEN_FILE: tokenFile,
          RECEIVER_COMMAND: command,
        },
        stdout: "piped",
        stderr: "inherit",
      }).spawn();
      const lines: LogLine[] = [];
      const reading = (async () => {
        let buffered = "";
        for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
          buffered += chunk;
          for (let end; (end = buffered.indexOf("\n")) >= 0; buffered = buffered.slice(end + 1)) {
            lines.push(JSON.parse(buffered.slice(0, end)));
          }
        }
      })();
      const example: ExampleProcess = {
        url,
        lines,
        async waitFor(what, matches) {
          for (let waited = 0;; waited += 20) {
            const found = lines.find(matches);
            if (found) return found;
            if (waited > 60_000) {
              throw new Error(`the example never logged ${what}: ${JSON.stringify(lines)}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        },
        async stop() {
          child.kill("SIGTERM");
          await child.status;
          await reading;
        },
      };
      await example.waitFor("listening", (line) => "listening" in line);
      return example;
    },
    async remove() {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(secretFile);
    },
  };
}
