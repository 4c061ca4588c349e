import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@^1.1.1";
import { importWebhookSecret, webhookHeaders } from "../../src/events/webhook_signature.ts";

const SECRET = `whsec_${btoa("0123456789abcdef0123456789abcdef")}`;
const BODY = JSON.stringify({
  type: "workflow_run.requested",
  timestamp: "2026-11-23T09:00:00.000Z",
  data: { businessId: "b1", runId: "r1", workflowId: "wf-1" },
});

Deno.test("the standardwebhooks library accepts what we sign and refuses it tampered", async () => {
  const key = await importWebhookSecret(SECRET);
  const now = Math.floor(Date.now() / 1000);
  const headers = await webhookHeaders(key, "msg_1", now, BODY);
  const receiver = new Webhook(SECRET);
  assert.deepEqual(receiver.verify(BODY, headers), JSON.parse(BODY));
  assert.throws(() => receiver.verify(BODY.replace("r1", "r2"), headers), /signature/i);
  assert.throws(
    () => receiver.verify(BODY, { ...headers, "webhook-id": "msg_2" }),
    /signature/i,
    "the id is signed",
  );
  const old = await webhookHeaders(key, "msg_1", now - 600, BODY);
  assert.throws(() => receiver.verify(BODY, old), /timestamp/i, "an old message is refused");
});

Deno.test("the specification's example signature", async () => {
  // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
  const key = await importWebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  const headers = await webhookHeaders(
    key,
    "msg_p5jXN8AQM9LWM0D4loKWxJek",
    1614265330,
    '{"test": 2432232314}',
  );
  assert.equal(headers["webhook-signature"], "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
});

Deno.test("a secret that is not a Standard Webhooks secret is refused, saying why", async (t) => {
  const cases = [
    ["no prefix", btoa("x".repeat(32)), /must start with whsec_/],
    ["not base64", "whsec_!!!", /followed by base64/],
    ["too short", `whsec_${btoa("x".repeat(16))}`, /24 to 64 bytes \(it holds 16\)/],
  ] as const;
  for (const [name, secret, message] of cases) {
    await t.step(name, async () => {
      await assert.rejects(importWebhookSecret(secret), message);
    });
  }
});
