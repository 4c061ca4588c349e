// The journey every stock MCP client must finish unmodified (issue 34): register, first consent,
// list tools, call an upstream tool (a step-up consent), a second upstream's tool (another),
// then the first upstream's tool again. Two tiny upstreams, `alpha` and `beta`, behind a
// workspace; the person is a cookie-keeping browser that answers each consent page as presented:
// the boxes as they start, then the primary button.
import assert from "node:assert/strict";
import { startTinyUpstream, type TinyUpstream } from "../../testkit/tiny_upstream.ts";
import { type Browser, hiddenField } from "../blackbox/support/accounts_browser.ts";
import { writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";
import {
  type OAuthFixture,
  oauthFixture,
  ownerBrowser,
  postForm,
  tickedScopes,
} from "../blackbox/support/oauth_helpers.ts";

export interface JourneyFixture {
  readonly fx: OAuthFixture;
  readonly mcpUrl: URL;
  readonly human: Browser;
  readonly alpha: TinyUpstream;
  readonly beta: TinyUpstream;
  /** Every consent page the person answered, in order. */
  readonly consents: ConsentSeen[];
  /** The person answers the consent page at `url` as presented; the redirect back. */
  consentAsPresented(url: string | URL): Promise<URL>;
  close(): Promise<void>;
}

export interface ConsentSeen {
  /** What the authorization request asked for. */
  readonly requested: string;
  /** The scope boxes that started ticked, so were granted by the primary button. */
  readonly ticked: readonly string[];
  /** The scopes the page lists as already held (kept). */
  readonly kept: readonly string[];
  readonly page: string;
}

export async function journeyFixture(): Promise<JourneyFixture> {
  const alpha = startTinyUpstream();
  const beta = startTinyUpstream();
  const file = await writeUpstreamsFile([
    { name: "alpha", title: "Alpha", url: alpha.url },
    { name: "beta", title: "Beta", url: beta.url },
  ]);
  const fx = await oauthFixture({ VESTIBULE_UPSTREAMS: file });
  const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
  const consents: ConsentSeen[] = [];
  return {
    fx,
    mcpUrl: new URL(`${fx.server.apiUrl}/api/mcp`),
    human,
    alpha,
    beta,
    consents,
    async consentAsPresented(url) {
      const page = await human.get(String(url));
      assert.equal(page.status, 200, page.text);
      const primary = page.text.match(
        /<button type="submit" class="button primary"\s+name="decision" value="([^"]+)"/,
      );
      assert.ok(primary, "the consent page has a primary decision button");
      const ticked = tickedScopes(page.text);
      consents.push({
        requested: new URL(url).searchParams.get("scope") ?? "",
        ticked,
        kept: keptScopes(page.text),
        page: page.text,
      });
      const body = new URLSearchParams({
        txn: hiddenField(page.text, "txn"),
        csrf: hiddenField(page.text, "csrf"),
      });
      for (const scope of ticked) body.append("scope", scope);
      body.append("decision", primary[1]!);
      const answer = await postForm(human, `${fx.auth}/api/auth/oauth2/consent`, body);
      assert.equal(answer.status, 303, answer.text);
      return new URL(answer.response.headers.get("Location")!, fx.auth);
    },
    async close() {
      await fx.close();
      await alpha.close();
      await beta.close();
      await Deno.remove(file);
    },
  };
}

/** The scopes a step-up consent page lists as already held. */
export function keptScopes(page: string): string[] {
  const section = page.match(/<section id="already-granted">([\s\S]*?)<\/section>/);
  return section ? [...section[1]!.matchAll(/<li><code>([^<]+)<\/code>/g)].map((m) => m[1]!) : [];
}

/** An upstream `add` call's sum, from a tools/call result. */
export function sumOf(result: { structuredContent?: unknown; isError?: unknown }): unknown {
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return (result.structuredContent as { sum?: unknown } | undefined)?.sum;
}

/** A space-delimited scope as a sorted list, to compare sets. */
export function scopeSet(scope: string | null | undefined): string[] {
  return (scope ?? "").split(" ").filter((s) => s !== "").sort();
}

/**
 * What each consent of a journey showed: the first grants no upstream scope, each step-up names
 * its own, starts it ticked and lists what is held as kept. `added` is what the client adds to
 * a step-up by itself (the v2 client adds offline_access when registered for refresh tokens).
 */
export function assertConsents(
  consents: readonly ConsentSeen[],
  added: readonly string[] = [],
): void {
  assert.equal(consents.length, 3, consents.map((c) => c.requested).join(" | "));
  const [first, alpha, beta] = consents as [ConsentSeen, ConsentSeen, ConsentSeen];
  assert.deepEqual(first.ticked, ["app.access"]);
  assert.deepEqual(first.kept, []);
  assert.deepEqual([...alpha.ticked].sort(), ["upstream.alpha", ...added].sort());
  assert.deepEqual(alpha.kept, ["app.access"]);
  assert.ok(alpha.page.includes("<code>upstream.alpha</code>: use the tools of Alpha"));
  assert.deepEqual(beta.ticked, ["upstream.beta"]);
  assert.deepEqual(
    [...beta.kept].sort(),
    ["app.access", "upstream.alpha", ...added].sort(),
  );
  assert.ok(beta.page.includes("<code>upstream.beta</code>: use the tools of Beta"));
}
