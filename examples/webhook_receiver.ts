/**
 * A reference receiver for Vestibule's events (docs/integrating.md "Events").
 *
 * It verifies each event's Standard Webhooks signature, drops replays, carries out a
 * `workflow_run.requested` by running a command, and reports the run `running`, then
 * `succeeded` or `failed`, through the operator API (`updateWorkflowRun`).
 *
 *   RECEIVER_LISTEN        host:port to listen on (127.0.0.1:9000)
 *   RECEIVER_SECRET_FILE   the file VESTIBULE_WEBHOOK_SECRET_FILE names (whsec_…)
 *   RECEIVER_OPERATOR_URL  Vestibule's operator listener, http://VESTIBULE_ADMIN_LISTEN
 *   RECEIVER_TOKEN_FILE    the file VESTIBULE_ADMIN_TOKEN_FILE names
 *   RECEIVER_COMMAND       the program (and arguments, split on spaces) a run starts; it gets
 *                          RUN_ID, WORKFLOW_ID and BUSINESS_ID in its environment, and its
 *                          standard output becomes the run's result
 *
 *   deno run --allow-net --allow-read --allow-env --allow-run examples/webhook_receiver.ts
 */
import { Webhook } from "npm:standardwebhooks@^1.1.1";

const env = (name: string) => Deno.env.get(name) ?? "";
const read = async (path: string) => (await Deno.readTextFile(path)).trim();
const [hostname = "", port = ""] = (env("RECEIVER_LISTEN") || "127.0.0.1:9000").split(":");
// Checks the signature and refuses a timestamp more than 5 minutes from now (replays).
const webhook = new Webhook(await read(env("RECEIVER_SECRET_FILE")));
const operator = env("RECEIVER_OPERATOR_URL");
const token = await read(env("RECEIVER_TOKEN_FILE"));
const command = env("RECEIVER_COMMAND").split(" ").filter(Boolean);

/** Ids seen within the tolerance window: a message sent again (a retry, a replay) is dropped. */
const seen = new Map<string, number>();
const log = (line: object) => console.log(JSON.stringify(line));

interface Event {
  type: string;
  data: { businessId: string; runId?: string; workflowId?: string };
}

Deno.serve(
  { hostname, port: Number(port), onListen: () => log({ listening: port }) },
  async (request) => {
    const body = await request.text();
    let event: Event;
    try {
      event = webhook.verify(body, Object.fromEntries(request.headers)) as Event;
    } catch (error) {
      log({ refused: (error as Error).message });
      return new Response("invalid signature or timestamp\n", { status: 401 });
    }
    const id = request.headers.get("webhook-id")!;
    for (const [old, at] of seen) if (at < Date.now() - 10 * 60_000) seen.delete(old);
    if (seen.has(id)) {
      log({ duplicate: id });
      return new Response(null, { status: 204 }); // handled before: acknowledged, not done again
    }
    seen.set(id, Date.now());
    log({ received: id, type: event.type });
    // Answer at once (Vestibule waits 15 s); the work goes on after the answer.
    if (event.type === "workflow_run.requested") queueMicrotask(() => carryOut(event.data));
    return new Response(null, { status: 204 });
  },
);

/** Runs the command for one run and reports it through the operator API. */
async function carryOut(run: Event["data"]): Promise<void> {
  await report(run, { status: "running" });
  const output = await new Deno.Command(command[0]!, {
    args: command.slice(1),
    env: { RUN_ID: run.runId!, WORKFLOW_ID: run.workflowId!, BUSINESS_ID: run.businessId },
    stdin: "null",
  }).output().catch((error) => ({ success: false, stdout: new TextEncoder().encode(`${error}`) }));
  const result = new TextDecoder().decode(output.stdout).trim().slice(-4096);
  await report(run, { status: output.success ? "succeeded" : "failed", result });
}

async function report(run: Event["data"], update: { status: string; result?: string }) {
  const url = `${operator}/v1/businesses/${run.businessId}/workflow-runs/${run.runId}`;
  try {
    const response = await fetch(url, {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(update),
    });
    log({ run: run.runId, status: update.status, answer: response.status });
    await response.body?.cancel();
  } catch (error) {
    // A real receiver would keep the report and try again; the example says so and goes on.
    log({ run: run.runId, status: update.status, error: (error as Error).message });
  }
}
