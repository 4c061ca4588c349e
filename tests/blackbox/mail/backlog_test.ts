// Issue 23: one business's backlog of thousands of events, draining to a receiver that takes a
// few milliseconds an answer, must not hold up a sign-in mail whose first attempt the real SMTP
// server refused: the retry goes when it is due. The server's clock is moved past the 5 s retry
// delay instead of sleeping it.
import assert from "node:assert/strict";
import { eventQueueOf } from "../../../src/events/event_outbox.ts";
import { createOutbox } from "../../../src/outbox/outbox.ts";
import { Browser, submitForm } from "../support/accounts_browser.ts";
import { startSmtpServer } from "../support/smtp_server.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";

const BACKLOG = 2_000;
const OWNER = "owner@example.com";

Deno.test("a sign-in mail refused once by the SMTP server is retried at its due time while thousands of events drain", async () => {
  let skew = 0;
  const now = () => Date.now() + skew;
  const receiver = await startTestReceiver({ delayMs: 5 });
  const smtp = await startSmtpServer({ deferFirst: [OWNER] });
  const ws = await startWorkspaceServer({
    ...receiver.env,
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: "vestibule@example.com",
  }, { now });
  try {
    // The backlog an agent's renames leave, recorded as the server records events.
    const outbox = createOutbox({ store: ws.server.store, now });
    for (let done = 0; done < BACKLOG; done += 250) {
      const recording = await outbox.recordInQueue(
        eventQueueOf(ws.businessId),
        Array.from({ length: 250 }, (_, i) => ({
          kind: "webhook",
          payload: {
            body: JSON.stringify({
              type: "business.renamed",
              timestamp: new Date(now()).toISOString(),
              data: { businessId: ws.businessId, name: `Shop ${done + i}` },
            }),
          },
          label: `business.renamed of business ${ws.businessId}`,
        })),
      );
      assert.ok(await ws.server.store.commit(recording.checks, recording.mutations));
    }
    const { token } = await ws.token(["app.access", "business.name"]);
    const rename = async (name: string) => {
      const { status, message } = await ws.call(token, "rename_business", { name });
      assert.equal(status, 200);
      assert.equal(message.result.isError, undefined, JSON.stringify(message));
    };
    // One more through the API: the server wakes its sender, which starts on the backlog.
    await rename("Acme Outdoor 1");
    await receiver.waitFor(20);

    const page = await submitForm(
      new Browser(),
      `${ws.server.authUrl}/sign-in`,
      `${ws.server.authUrl}/sign-in`,
      {
        email: OWNER,
      },
    );
    assert.equal(page.status, 200, page.text);
    assert.equal(smtp.received.length, 0, "the first attempt was refused (451)");
    assert.ok(
      ws.server.logs.some((line) => line.includes("delivery failed, will retry")),
      ws.server.logs.join("\n"),
    );
    // Its retry falls due; the agent goes on renaming, which wakes the sender as any event does.
    skew += 5_000;
    await rename("Acme Outdoor 2");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`no mail 3 s after its retry was due; events: ${receiver.accepted.length}`),
          ),
        3_000,
      );
    });
    const [mail] = await Promise.race([smtp.waitFor(1), late]).finally(() => clearTimeout(timer));
    assert.deepEqual(mail!.envelopeTo, [OWNER]);
    assert.ok(
      receiver.accepted.length < BACKLOG,
      `the mail went while the backlog drained (${receiver.accepted.length} events delivered)`,
    );
  } finally {
    await ws.close();
    await receiver.close();
    await smtp.close();
  }
});
