// Shared set-up of the per-person upstream tests: a key file, a gateway server whose upstream
// is the OAuth-protected one of testkit/oauth_upstream.ts (oidc-provider in front of an SDK MCP
// server), a person signed in through the mailed link, and connecting their account as a
// browser would (our page, the provider's own sign-in, our callback).
import assert from "node:assert/strict";
import { newVaultKey } from "../../../src/gateway/connect/vault.ts";
import {
  type OAuthUpstream,
  type OAuthUpstreamOptions,
  startOAuthUpstream,
} from "../../../testkit/oauth_upstream.ts";
import { type Browser, hiddenField, tempOutbox } from "./accounts_browser.ts";
import { type GatewayServer, startGatewayServer } from "./gateway_support.ts";
import type { TestServerOptions } from "./harness.ts";
import { signIn } from "./workspace_support.ts";

/** An owner-only key file for VESTIBULE_UPSTREAM_KEY_FILE; its path. */
export async function writeKeyFile(...keys: string[]): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".key" });
  await Deno.chmod(path, 0o600);
  await Deno.writeTextFile(path, `${(keys.length > 0 ? keys : [newVaultKey()]).join("\n")}\n`);
  return path;
}

export interface PersonUpstreamSetup {
  readonly upstream: OAuthUpstream;
  readonly ws: GatewayServer;
  readonly outbox: Awaited<ReturnType<typeof tempOutbox>>;
  readonly keyFile: string;
  close(): Promise<void>;
}

/** The OAuth upstream, behind a gateway server as `crm` with `"auth": "person"` (or as given). */
export async function startPersonUpstream(
  options: {
    readonly upstream?: OAuthUpstreamOptions;
    readonly entry?: Record<string, unknown>;
    readonly env?: Record<string, string>;
    readonly server?: TestServerOptions;
  } = {},
): Promise<PersonUpstreamSetup> {
  const upstream = await startOAuthUpstream(options.upstream);
  const keyFile = await writeKeyFile();
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "crm", title: "Acme CRM", url: upstream.mcpUrl, auth: "person", ...options.entry }],
    { VESTIBULE_UPSTREAM_KEY_FILE: keyFile, VESTIBULE_MAIL: outbox.env, ...options.env },
    options.server,
  );
  return {
    upstream,
    ws,
    outbox,
    keyFile,
    async close() {
      await ws.close();
      await upstream.close();
      await Deno.remove(keyFile);
    },
  };
}

/** Where a person connects: a gateway server's origin and business (in process or not). */
export interface ConnectTarget {
  readonly server: { readonly authUrl: string };
  readonly businessId: string;
}

/** The connect page of `upstream` for the business, as the signed-in browser sees it. */
export function connectPageUrl(ws: ConnectTarget, upstream = "crm"): string {
  return `${ws.server.authUrl}/connections/${upstream}?business=${ws.businessId}`;
}

/**
 * Connects the browser's person to the upstream as `login`, as they would: the link (which goes
 * straight to the upstream's sign-in when nothing is connected yet) or else our page's connect
 * button, then the provider's own pages, then our callback; returns the callback's page.
 */
export async function connect(
  setup: {
    readonly ws: ConnectTarget;
    readonly upstream: Pick<OAuthUpstream, "authorize" | "issuer">;
  },
  browser: Browser,
  login: string,
  page = connectPageUrl(setup.ws),
) {
  const shown = await browser.get(page);
  let location: string;
  if (shown.status === 303) location = shown.response.headers.get("Location")!;
  else {
    assert.equal(shown.status, 200, shown.text);
    const started = await browser.post(`${setup.ws.server.authUrl}${new URL(page).pathname}`, {
      csrf: hiddenField(shown.text, "csrf"),
      business: hiddenField(shown.text, "business"),
      action: "connect",
      ...(page.includes("consent=") ? { consent: hiddenField(shown.text, "consent") } : {}),
    });
    assert.equal(started.status, 303, started.text);
    location = started.response.headers.get("Location")!;
  }
  assert.ok(location.startsWith(setup.upstream.issuer), location);
  const back = await setup.upstream.authorize(location, login);
  return await browser.get(back.href);
}

/** A browser signed in as `email` (the owner by default) through the mailed link. */
export function personBrowser(setup: PersonUpstreamSetup, email = "owner@example.com") {
  return signIn(setup.ws, setup.outbox, email);
}
