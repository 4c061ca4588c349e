import assert from "node:assert/strict";
import { config } from "../oauth/fixtures.ts";
import {
  loadConnectionGuide,
  parseConnectionGuide,
  renderGuidePage,
  renderGuideText,
} from "../../src/onboarding/connection_guide.ts";
import { TemplateError } from "../../src/content/templates.ts";

const TEMPLATE = await Deno.readTextFile(
  new URL("../../static/auth/connection_guide.json", import.meta.url),
);

Deno.test("connection guide: the template fills in the configured origins", async () => {
  const guide = await loadConnectionGuide(config);
  assert.equal(guide.workspaceMcpUrl, "https://api.example.com/api/mcp");
  assert.equal(
    guide.protectedResourceMetadataUrl,
    "https://api.example.com/.well-known/oauth-protected-resource",
  );
  assert.equal(
    guide.authorizationServerMetadataUrl,
    "https://auth.example.com/.well-known/oauth-authorization-server/api/auth",
  );
  assert.equal(guide.issuer, "https://auth.example.com/api/auth");
  assert.equal(guide.links.signUp, "https://auth.example.com/sign-up");
  assert.doesNotMatch(JSON.stringify(guide), /\{(base|auth|api)_url\}/, "no placeholder left");
});

Deno.test("connection guide: a broken template is a TemplateError naming the field", () => {
  // main.ts turns a TemplateError into its one start-up line; anything else would be a crash.
  const broken = TEMPLATE.replace('"initialScope": "app.access"', '"initialScope": "openid"');
  assert.throws(
    () => parseConnectionGuide(broken, config),
    (error: unknown) =>
      error instanceof TemplateError &&
      error.message.startsWith("static/auth/connection_guide.json: initialScope: "),
  );
  assert.throws(
    () => parseConnectionGuide(TEMPLATE.slice(0, -10), config),
    (error: unknown) =>
      error instanceof TemplateError &&
      error.message.startsWith("static/auth/connection_guide.json: not JSON"),
  );
});

Deno.test("connection guide: text and HTML say the same things", async () => {
  const guide = await loadConnectionGuide(config);
  const text = renderGuideText(guide);
  const html = renderGuidePage(guide);
  for (const step of guide.steps) {
    assert.ok(text.includes(step.title), step.title);
    assert.ok(html.includes(step.title), step.title);
  }
  assert.match(text, /Scope to start with: app\.access/);
  assert.match(html, /<a href="https:\/\/auth\.example\.com\/sign-up">Sign up<\/a>/);
});

Deno.test("connection guide: more scopes come from a new authorization request, not a refresh", async () => {
  const guide = await loadConnectionGuide(config);
  const stepUp = guide.steps.find((step) => step.text.includes('error="insufficient_scope"'));
  assert.ok(stepUp, "a step answers the insufficient_scope challenge");
  assert.match(stepUp.title, /new authorization request, never a refresh/);
  assert.match(stepUp.text, /send a new authorization request .* with scope set to that list/);
  // A refresh cannot step up: the official SDK's way through it, and the pitfall without it.
  assert.match(stepUp.text, /refresh right after that 403 is refused with invalid_grant/);
  assert.match(stepUp.text, /SDK 1\.32\.2/);
  assert.match(stepUp.text, /invalidateCredentials method that drops the stored tokens/);
  assert.match(stepUp.text, /"Server returned 403 after trying upscoping"/);
  assert.match(stepUp.text, /forget the stored tokens .* call auth\(provider, \{ serverUrl: /);
  assert.ok(renderGuideText(guide).includes(stepUp.text), "in /llms.txt and the tool's text");
  assert.ok(renderGuidePage(guide).includes("never a refresh"), "on /agents");
});

Deno.test("connection guide: the page escapes what the template says", () => {
  const hostile = TEMPLATE.replace(
    '"title": "Connect an agent to the Vestibule workspace"',
    '"title": "<script>alert(1)</script>"',
  );
  const html = renderGuidePage(parseConnectionGuide(hostile, config));
  assert.ok(!html.includes("<script>"));
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
});
