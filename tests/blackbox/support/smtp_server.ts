// A real SMTP server on loopback (nodemailer's own smtp-server) that keeps what it receives.
import { SMTPServer } from "npm:smtp-server@3.21.6";

export interface ReceivedMail {
  readonly envelopeTo: string[];
  readonly user: string | null;
  readonly headers: Headers;
  /** The text body (of a multipart message: its text/plain part), transfer encoding undone. */
  readonly text: string;
  /** The text/html part of a multipart message, transfer encoding undone; null without one. */
  readonly html: string | null;
  /** The content types of a multipart message's parts, in order; empty for a single part. */
  readonly parts: readonly string[];
}

export interface SmtpServerOptions {
  /** Listen here; a free port by default. */
  readonly port?: number;
  /** Require AUTH PLAIN/LOGIN with these credentials. */
  readonly auth?: { readonly user: string; readonly pass: string };
  /** Offer STARTTLS with a self-signed certificate made for this test (see `ca`). */
  readonly starttls?: boolean;
  /** RCPT TO these addresses is answered 550. */
  readonly rejectRecipients?: readonly string[];
  /** RCPT TO these addresses is answered 451 (try again later) the first time each is given. */
  readonly deferFirst?: readonly string[];
}

export interface TestSmtpServer {
  readonly port: number;
  readonly received: ReceivedMail[];
  /** The certificate to trust (PEM) when STARTTLS is on. */
  readonly ca: string | null;
  /** Connections (SMTP sessions) opened so far. */
  readonly connections: number;
  /** Resolves when `count` messages have been received; rejects after 60 s rather than hang. */
  waitFor(count: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made with Debian's openssl. `leaf`
 * makes it CA:FALSE: rustls (Deno.connectTls) refuses a CA certificate as the server's own.
 */
export async function selfSignedCertificate(
  { leaf = false } = {},
): Promise<{ key: string; cert: string }> {
  const dir = await Deno.makeTempDir();
  try {
    const { success, stderr } = await new Deno.Command("/usr/bin/openssl", {
      args: [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ...(leaf ? ["-addext", "basicConstraints=critical,CA:FALSE"] : []),
        "-keyout",
        `${dir}/key.pem`,
        "-out",
        `${dir}/cert.pem`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!success) throw new Error(new TextDecoder().decode(stderr));
    return {
      key: await Deno.readTextFile(`${dir}/key.pem`),
      cert: await Deno.readTextFile(`${dir}/cert.pem`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters: { count: number; resolve: (mails: ReceivedMail[]) => void }[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let connections = 0;
  const deferred = new Set<string>();
  const tls = options.starttls ? await selfSignedCertificate() : null;
  const server = new SMTPServer({
    ...(tls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ["STARTTLS"] }),
    authOptional: !options.auth,
    // Plain-text AUTH only after STARTTLS, as a real submission server insists.
    allowInsecureAuth: !options.starttls,
    logger: false,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      const ok = options.auth && auth.username === options.auth.user &&
        auth.password === options.auth.pass;
      if (!ok) return callback(new Error("Invalid username or password"));
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      if (options.rejectRecipients?.includes(address.address)) {
        const error = new Error("5.1.1 Mailbox unknown") as Error & { responseCode: number };
        error.responseCode = 550;
        return callback(error);
      }
      if (options.deferFirst?.includes(address.address) && !deferred.has(address.address)) {
        deferred.add(address.address);
        const error = new Error("4.3.0 Try again later") as Error & { responseCode: number };
        error.responseCode = 451;
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("end", () => {
        received.push(_parse(
          new TextDecoder().decode(_concat(chunks)),
          session.envelope.rcptTo.map((r) => r.address),
          typeof session.user === "string" ? session.user : null,
        ));
        for (const waiter of waiters.filter((w) => received.length >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve([...received]);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    received,
    ca: tls?.cert ?? null,
    get connections() {
      return connections;
    },
    waitFor(count) {
      if (received.length >= count) return Promise.resolve([...received]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          reject(new Error(`${received.length} of ${count} messages arrived within 60 s`));
        }, 60_000);
        timers.add(timer);
        waiters.push({
          count,
          resolve: (mails) => (clearTimeout(timer), timers.delete(timer), resolve(mails)),
        });
      });
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function _concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** Headers (unfolded) and the body: a single part, or a multipart's text and HTML parts. */
function _parse(raw: string, envelopeTo: string[], user: string | null): ReceivedMail {
  const { headers, body } = _entity(raw);
  const boundary = headers.get("Content-Type")?.match(/^multipart\/[^;]+;.*boundary="?([^";]+)"?/i)
    ?.[1];
  if (boundary === undefined) {
    return { envelopeTo, user, headers, text: body, html: null, parts: [] };
  }
  // RFC 2046 §5.1.1: parts between "--boundary" lines, the last closed by "--boundary--".
  const parts = raw.slice(raw.indexOf("\r\n\r\n") + 4).split(`--${boundary}`).slice(1, -1)
    .map((part) => _entity(part.replace(/^\r\n/, "").replace(/\r\n$/, "")));
  const typeOf = (part: { headers: Headers }) =>
    (part.headers.get("Content-Type") ?? "text/plain").split(";")[0]!.trim().toLowerCase();
  return {
    envelopeTo,
    user,
    headers,
    text: parts.find((p) => typeOf(p) === "text/plain")?.body ?? "",
    html: parts.find((p) => typeOf(p) === "text/html")?.body ?? null,
    parts: parts.map(typeOf),
  };
}

/** One entity's headers (unfolded) and its body, transfer encoding undone. */
function _entity(raw: string): { headers: Headers; body: string } {
  const split = raw.indexOf("\r\n\r\n");
  const headers = new Headers();
  for (const line of raw.slice(0, split).replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = raw.slice(split + 4);
  const encoding = headers.get("Content-Transfer-Encoding")?.toLowerCase();
  if (encoding === "quoted-printable") {
    body = body.replace(/=\r\n/g, "").replace(
      /(=[0-9A-F]{2})+/g,
      (run) =>
        new TextDecoder().decode(
          new Uint8Array(run.slice(1).split("=").map((hex) => parseInt(hex, 16))),
        ),
    );
  } else if (encoding === "base64") {
    body = new TextDecoder().decode(
      Uint8Array.from(atob(body.replace(/\s/g, "")), (c) => c.charCodeAt(0)),
    );
  }
  return { headers, body: body.replaceAll("\r\n", "\n") };
}
