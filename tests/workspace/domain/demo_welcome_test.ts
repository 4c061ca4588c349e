import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/config.ts";
import { demoWelcome } from "../../../src/workspace/domain/demo_welcome.ts";

Deno.test("the demo's welcome names where each mail transport puts the sign-in link", () => {
  const lastLine = (env: Record<string, string>) => demoWelcome(resolveConfig(env)).at(-1);
  assert.equal(
    lastLine({ VESTIBULE_MAIL: "file:data/outbox.jsonl" }),
    'The sign-in link is appended to data/outbox.jsonl, one JSON object a line, as its "link" ' +
      "(VESTIBULE_MAIL=file:data/outbox.jsonl).",
  );
  assert.equal(
    lastLine({
      VESTIBULE_MAIL: "smtp://demo:secret-pass@127.0.0.1:1025",
      VESTIBULE_MAIL_FROM: "vestibule@example.com",
    }),
    "The sign-in link is mailed to demo-owner@example.com through smtp://demo:***@127.0.0.1:1025; " +
      "example.com takes no mail, so read it where that server keeps what it catches (a " +
      "development mail catcher such as Mailpit).",
  );
  assert.deepEqual(demoWelcome(resolveConfig({ VESTIBULE_AUTH_URL: "http://127.0.0.1:9" })), [
    'Demo: "Demo Outfitters" is owned by demo-owner@example.com (demo-member@example.com is a member).',
    "Sign in as demo-owner@example.com at http://127.0.0.1:9/sign-in",
    "The sign-in link appears here, on stderr (VESTIBULE_MAIL=log).",
  ]);
});
