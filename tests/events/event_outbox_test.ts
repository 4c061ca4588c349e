import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@^1.1.1";
import { webhookDeliveryHandler } from "../../src/events/event_outbox.ts";
import { importWebhookSecret } from "../../src/events/webhook_signature.ts";
import type { Delivery } from "../../src/outbox/delivery.ts";
import { DeliveryError } from "../../src/outbox/sender.ts";

const SECRET = `whsec_${btoa("0123456789abcdef0123456789abcdef")}`;
const URL = "https://hooks.example.com/in?token=s3cret";
const BODY = '{"type":"trigger.disabled","timestamp":"2026-11-23T09:00:00.000Z","data":{}}';

const delivery = (payload: unknown): Delivery => ({
  id: "0mhx0abcde-7f3c",
  kind: "webhook",
  payload,
  label: "trigger.disabled of business b1",
  state: "sending",
  attempts: 1,
  createdAt: 0,
  nextAttemptAt: 0,
  claim: null,
  expiresAt: null,
  lastError: null,
  reportTo: null,
});

async function attempt(answer: () => Promise<Response>) {
  const requests: Request[] = [];
  const handler = webhookDeliveryHandler({
    target: { url: URL, key: await importWebhookSecret(SECRET) },
    fetch: (input, init) => (requests.push(new Request(input, init)), answer()),
    now: () => Date.now(),
  });
  try {
    await handler(delivery({ body: BODY }));
    return { outcome: "sent" as const, requests };
  } catch (error) {
    assert.ok(error instanceof DeliveryError);
    return { outcome: error.permanent ? "failed" : "retry", error: error.message, requests };
  }
}

Deno.test("an event is POSTed as stored, signed under the delivery's id", async () => {
  const { outcome, requests } = await attempt(() => Promise.resolve(new Response(null)));
  assert.equal(outcome, "sent");
  const request = requests[0]!;
  assert.equal(request.method, "POST");
  assert.equal(request.url, URL);
  assert.equal(request.headers.get("content-type"), "application/json");
  assert.equal(request.headers.get("webhook-id"), "0mhx0abcde-7f3c");
  const body = await request.text();
  assert.equal(body, BODY);
  new Webhook(SECRET).verify(body, Object.fromEntries(request.headers));
});

Deno.test("2xx is delivered; 408, 429, 5xx and redirects are retried; other 4xx given up", async (t) => {
  const cases = [
    [200, "sent"],
    [204, "sent"],
    [301, "retry"],
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
    [400, "failed"],
    [401, "failed"],
    [404, "failed"],
    [410, "failed"],
  ] as const;
  for (const [status, expected] of cases) {
    await t.step(`HTTP ${status}: ${expected}`, async () => {
      const result = await attempt(() =>
        Promise.resolve(new Response(status === 204 ? null : "x", { status }))
      );
      assert.equal(result.outcome, expected);
      if (expected !== "sent") assert.equal(result.error, `the endpoint answered HTTP ${status}`);
    });
  }
});

Deno.test("an endpoint that cannot be reached is retried, and the error never quotes the URL", async () => {
  const result = await attempt(() =>
    Promise.reject(new TypeError(`error sending request for url (${URL}): connection refused`))
  );
  assert.equal(result.outcome, "retry");
  assert.equal(result.error, "the endpoint could not be reached (TypeError)");
});
