// On an https {auth_url} (TLS terminated by a proxy in front), cookies get the __Host- prefix
// and Secure. fetch cannot set Host, so this test speaks HTTP/1.1 over a plain socket.
import assert from "node:assert/strict";
import { tempOutbox } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { freePorts } from "../../../testkit/ports.ts";

interface RawResponse {
  readonly status: number;
  readonly setCookies: string[];
  readonly location: string | null;
  readonly text: string;
}

async function raw(
  port: number,
  host: string,
  method: string,
  path: string,
  options: { cookie?: string; form?: Record<string, string> } = {},
): Promise<RawResponse> {
  const body = options.form ? new URLSearchParams(options.form).toString() : "";
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `Host: ${host}`,
    "Connection: close",
    ...(options.cookie ? [`Cookie: ${options.cookie}`] : []),
    ...(options.form
      ? ["Content-Type: application/x-www-form-urlencoded", `Content-Length: ${body.length}`]
      : []),
  ];
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body));
  const response = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  const [head = "", text = ""] = response.split(/\r\n\r\n(.*)/s);
  const [statusLine = "", ...headerLines] = head.split("\r\n");
  const header = (line: string) => line.slice(line.indexOf(":") + 1).trim();
  return {
    status: Number(statusLine.split(" ")[1]),
    setCookies: headerLines.filter((l) => /^set-cookie:/i.test(l)).map(header),
    location: headerLines.filter((l) => /^location:/i.test(l)).map(header)[0] ?? null,
    text,
  };
}

const field = (html: string, name: string) =>
  html.match(new RegExp(`name="${name}" value="([^"]*)"`))![1]!;
const pair = (setCookie: string) => setCookie.split(";")[0]!;

Deno.test("https origins get __Host- cookies with Secure through the whole sign-in", async () => {
  const outbox = await tempOutbox();
  const [port] = freePorts(1);
  const server = await startTestServer({
    VESTIBULE_BASE_URL: "https://www.example.test",
    VESTIBULE_AUTH_URL: "https://auth.example.test",
    VESTIBULE_API_URL: "https://api.example.test",
    VESTIBULE_LISTEN: `127.0.0.1:${port}`,
    VESTIBULE_MAIL: outbox.env,
  });
  const host = "auth.example.test";
  try {
    const form = await raw(port!, host, "GET", "/sign-up");
    assert.equal(form.status, 200);
    const [csrfCookie] = form.setCookies;
    assert.match(
      csrfCookie!,
      /^__Host-vestibule_csrf=[\w-]+; Path=\/; Max-Age=\d+; HttpOnly; Secure; SameSite=Lax$/,
    );
    const sent = await raw(port!, host, "POST", "/sign-up", {
      cookie: pair(csrfCookie!),
      form: { csrf: field(form.text, "csrf"), email: "tls@example.com", business: "TLS Ltd" },
    });
    assert.equal(sent.status, 200, sent.text);
    const link = new URL((await outbox.read())[0]!.link);
    assert.equal(link.origin, "https://auth.example.test");
    const confirm = await raw(port!, host, "GET", link.pathname + link.search, {
      cookie: pair(csrfCookie!),
    });
    const done = await raw(port!, host, "POST", "/sign-in/verify", {
      cookie: pair(csrfCookie!),
      form: { csrf: field(confirm.text, "csrf"), token: field(confirm.text, "token") },
    });
    assert.equal(done.status, 303);
    assert.equal(done.location, "https://auth.example.test/account?welcome");
    const [session] = done.setCookies;
    assert.match(
      session!,
      /^__Host-vestibule_session=[\w-]{43}; Path=\/; Max-Age=1209600; HttpOnly; Secure; SameSite=Lax$/,
    );
    const account = await raw(port!, host, "GET", "/account", { cookie: pair(session!) });
    assert.equal(account.status, 200);
    assert.match(account.text, /TLS Ltd/);
  } finally {
    await server.close();
  }
});
