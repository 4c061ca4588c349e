// A tiny cookie-keeping browser for black-box tests of the human pages, and the outbox reader.
import assert from "node:assert/strict";

export interface OutboxMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly link: string;
}

/** A temporary `file:` outbox for VESTIBULE_MAIL. */
export async function tempOutbox(): Promise<{ env: string; read(): Promise<OutboxMail[]> }> {
  return outboxAt(`${await Deno.makeTempDir()}/outbox.jsonl`);
}

/** The `file:` outbox at `path` for VESTIBULE_MAIL, and its reader. */
export function outboxAt(path: string): { env: string; read(): Promise<OutboxMail[]> } {
  return {
    env: `file:${path}`,
    async read() {
      try {
        const text = await Deno.readTextFile(path);
        return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as OutboxMail);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return [];
        throw error;
      }
    },
  };
}

export interface Page {
  readonly response: Response;
  readonly status: number;
  readonly text: string;
}

/** Keeps cookies per name (one origin), never follows redirects by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();

  async get(url: string): Promise<Page> {
    return await this.#send(url, { method: "GET" });
  }

  /** A form's fields; a URLSearchParams may repeat one (checkboxes). */
  async post(url: string, fields: Record<string, string> | URLSearchParams): Promise<Page> {
    return await this.#send(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
  }

  async #send(url: string, init: RequestInit): Promise<Page> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set("Cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { response, status: response.status, text: await response.text() };
  }
}

/** The value of a hidden input named `name` in a page. */
export function hiddenField(html: string, name: string): string {
  const match = html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`));
  assert.ok(match, `no hidden field "${name}" in the page`);
  return match[1]!.replaceAll("&amp;", "&");
}

/** Submits a page's form after loading it, as a person would. */
export async function submitForm(
  browser: Browser,
  formUrl: string,
  action: string,
  fields: Record<string, string>,
): Promise<Page> {
  const form = await browser.get(formUrl);
  assert.equal(form.status, 200, form.text);
  return await browser.post(action, { csrf: hiddenField(form.text, "csrf"), ...fields });
}

/** Opens an e-mailed link and presses its button; returns the POST's answer. */
export async function followLink(browser: Browser, link: string): Promise<Page> {
  const confirm = await browser.get(link);
  assert.equal(confirm.status, 200, confirm.text);
  return await browser.post(new URL("/sign-in/verify", link).href, {
    csrf: hiddenField(confirm.text, "csrf"),
    token: hiddenField(confirm.text, "token"),
  });
}

/** Signs up (or adds a business) through the forms and the outbox; the browser ends signed in. */
export async function signUpThroughForms(
  browser: Browser,
  authUrl: string,
  outbox: { read(): Promise<OutboxMail[]> },
  email: string,
  business: string,
): Promise<void> {
  const before = (await outbox.read()).length;
  const sent = await submitForm(browser, `${authUrl}/sign-up`, `${authUrl}/sign-up`, {
    email,
    business,
  });
  assert.equal(sent.status, 200, sent.text);
  const mails = await outbox.read();
  assert.equal(mails.length, before + 1);
  const confirmed = await followLink(browser, mails.at(-1)!.link);
  assert.equal(confirmed.status, 303, confirmed.text);
}

/** A new browser signed in as the existing account `email` through the form and its mail. */
export async function signInThroughForms(
  authUrl: string,
  outbox: { read(): Promise<OutboxMail[]> },
  email: string,
): Promise<Browser> {
  const browser = new Browser();
  const sent = await submitForm(browser, `${authUrl}/sign-in`, `${authUrl}/sign-in`, { email });
  assert.equal(sent.status, 200, sent.text);
  const mail = (await outbox.read()).filter((m) => m.to === email).at(-1)!;
  assert.equal((await followLink(browser, mail.link)).status, 303);
  return browser;
}
