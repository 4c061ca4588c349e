// Two Vestibules on one machine, each with default settings, one the per-person upstream of the
// other, and one browser for both: cookies ignore ports, so the two keep apart only by their
// names; the first cannot offer the second a loopback client metadata document it would refuse,
// so it registers; and the second, asked with such a document, says why and what to do.
import assert from "node:assert/strict";
import { Browser, followLink, submitForm, tempOutbox } from "../support/accounts_browser.ts";
import { startGatewayServer, until } from "../support/gateway_support.ts";
import { consent, type OAuthFixture } from "../support/oauth_helpers.ts";
import { connectPageUrl, writeKeyFile } from "../support/person_upstream_support.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";

/** Signs the browser in at `authUrl` through the form and the mailed link. */
async function signInHere(
  browser: Browser,
  authUrl: string,
  outbox: Awaited<ReturnType<typeof tempOutbox>>,
  email: string,
): Promise<void> {
  const sent = await submitForm(browser, `${authUrl}/sign-in`, `${authUrl}/sign-in`, { email });
  assert.equal(sent.status, 200, sent.text);
  const mail = (await outbox.read()).filter((m) => m.to === email).at(-1)!;
  assert.equal((await followLink(browser, mail.link)).status, 303);
}

Deno.test("one browser signed in at two Vestibules on one machine keeps both sessions", async () => {
  const [one, two] = [await tempOutbox(), await tempOutbox()];
  const first = await startWorkspaceServer({ VESTIBULE_MAIL: one.env });
  const second = await startWorkspaceServer({ VESTIBULE_MAIL: two.env });
  try {
    assert.equal(new URL(first.server.authUrl).hostname, new URL(second.server.authUrl).hostname);
    const browser = new Browser();
    await signInHere(browser, first.server.authUrl, one, "owner@example.com");
    await signInHere(browser, second.server.authUrl, two, "owner@example.com");
    for (const server of [first.server, second.server]) {
      const page = await browser.get(`${server.authUrl}/account`);
      assert.equal(page.status, 200, `still signed in at ${server.authUrl}`);
    }
    // One session cookie per instance, told apart by its port.
    const names = [...browser.cookies.keys()].filter((n) => n.startsWith("vestibule_session"));
    assert.deepEqual(
      names.sort(),
      [
        `vestibule_session_${new URL(first.server.authUrl).port}`,
        `vestibule_session_${new URL(second.server.authUrl).port}`,
      ].sort(),
    );
  } finally {
    await first.close();
    await second.close();
  }
});

Deno.test("a Vestibule connects a person to another on the same machine, default settings, one browser", async () => {
  const upstreamOutbox = await tempOutbox();
  const upstream = await startWorkspaceServer({ VESTIBULE_MAIL: upstreamOutbox.env });
  const keyFile = await writeKeyFile();
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{
      name: "other",
      title: "Other Vestibule",
      url: `${upstream.server.apiUrl}/api/mcp`,
      auth: "person",
    }],
    { VESTIBULE_UPSTREAM_KEY_FILE: keyFile, VESTIBULE_MAIL: outbox.env },
  );
  try {
    const { token } = await ws.token(["app.access", "upstream.other"]);
    const browser = new Browser();
    await signInHere(browser, ws.server.authUrl, outbox, "owner@example.com");
    const started = await browser.get(connectPageUrl(ws, "other"));
    assert.equal(started.status, 303, started.text);
    const authorize = new URL(started.response.headers.get("Location")!);
    assert.equal(authorize.origin, upstream.server.authUrl);
    // Registered: the loopback document would be refused there.
    const clientId = authorize.searchParams.get("client_id")!;
    assert.ok(!clientId.startsWith("http"), clientId);

    // The same browser signs in at the other Vestibule and consents there.
    await signInHere(browser, upstream.server.authUrl, upstreamOutbox, "owner@example.com");
    const back = await consent(
      browser,
      { auth: upstream.server.authUrl } as OAuthFixture,
      authorize.href,
    );
    assert.equal(back.origin + back.pathname, `${ws.server.authUrl}/connections/callback`);
    const done = await browser.get(back.href);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Connected/);

    const names = await until("the other Vestibule's tools", async () => {
      const listed = (await ws.toolNames(token)).filter((n) => n.startsWith("other__"));
      return listed.length > 0 && listed;
    });
    assert.ok(names.includes("other__get_business"), names.join());
    const called = await ws.call(token, "other__get_business");
    assert.equal(called.message.result.isError, undefined, JSON.stringify(called.message));
  } finally {
    await ws.close();
    await upstream.close();
    await Deno.remove(keyFile);
  }
});

Deno.test("a loopback client metadata document is refused in words that say what to do", async () => {
  const outbox = await tempOutbox();
  const server = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env });
  try {
    const browser = new Browser();
    await signInHere(browser, server.server.authUrl, outbox, "owner@example.com");
    const clientId = "http://127.0.0.1:9/connections/client.json";
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: "http://127.0.0.1:9/connections/callback",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      state: "s",
    });
    const page = await browser.get(
      `${server.server.authUrl}/api/auth/oauth2/authorize?${query}`,
    );
    assert.equal(page.status, 400);
    const text = page.text.replaceAll(/\s+/g, " ");
    assert.ok(text.includes(clientId), "names the document");
    assert.match(text, /on its own computer/);
    assert.match(text, /can register with this server instead/);
    assert.match(text, /VESTIBULE_CIMD_ALLOW_LOOPBACK=on/);
    assert.doesNotMatch(page.text, /name="txn"/, "no consent for a client it cannot read");
  } finally {
    await server.close();
  }
});
