// The doctor's offline checks against a real in-memory store: schema version, signing key,
// paths and the start-up refusals, one finding per line.
import assert from "node:assert/strict";
import { type Finding, offlineChecks } from "../../../src/operator/cli/doctor.ts";
import { adminRunner, withStore } from "./admin_runner.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { createSigningKeys, currentSigningKid } from "../../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { CURRENT_SCHEMA, SCHEMA_KEY } from "../../../src/schema.ts";
import { newVaultKey } from "../../../src/gateway/connect/vault.ts";
import { editedStaticDir } from "../../blackbox/support/main_process.ts";
import { startSmtpServer } from "../../blackbox/support/smtp_server.ts";

const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
// The pages an operator has written: the clean bills below are not about placeholders.
const staticDir = await editedStaticDir();
globalThis.addEventListener("unload", () => Deno.removeSync(staticDir, { recursive: true }));

const faults = (findings: Finding[]) => findings.filter((f) => f.level === "fault");

Deno.test("doctor: a store at this schema with a signing key has no fault", async () => {
  await withStore(async (store) => {
    await createSigningKeys({ store, now: Date.now }).current();
    const findings = await offlineChecks({ config, env: {}, store, staticDir });
    assert.deepEqual(faults(findings), []);
    assert.ok(findings.some((f) => f.what.includes(`schema version ${CURRENT_SCHEMA}`)));
  }, { stamped: true });
});

Deno.test("doctor: a store without a signing key is a fault, and none is created", async () => {
  await withStore(async (store) => {
    const findings = await offlineChecks({ config, env: {}, store, staticDir });
    assert.deepEqual(faults(findings).map((f) => [f.what, f.where]), [[
      "the store has no signing key: run `deno task admin rotate-signing-key` to create one",
      "VESTIBULE_DATA",
    ]]);
    assert.equal(await currentSigningKid(store), null);
  }, { stamped: true });
});

Deno.test("doctor: a store from a newer release is a fault", async () => {
  await withStore(async (store) => {
    await createSigningKeys({ store, now: Date.now }).current();
    await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA + 1 });
    const [fault, ...rest] = faults(await offlineChecks({ config, env: {}, store, staticDir }));
    assert.deepEqual(rest, []);
    assert.match(fault!.what, new RegExp(`schema version ${CURRENT_SCHEMA + 1}, newer`));
  }, { stamped: true });
});

Deno.test("doctor: start-up refusals, unknown variables and ungranted paths", async () => {
  await withStore(async (store) => {
    await createSigningKeys({ store, now: Date.now }).current();
    const publicLog = resolveConfig({
      VESTIBULE_DATA: "data/x.kv",
      VESTIBULE_BASE_URL: "https://acme.example",
      VESTIBULE_AUTH_URL: "https://auth.acme.example",
      VESTIBULE_API_URL: "https://api.acme.example",
    });
    const findings = await offlineChecks({
      config: publicLog,
      env: { VESTIBULE_BASEURL: "x" },
      store,
      granted: () => false,
      staticDir,
    });
    assert.deepEqual(findings.filter((f) => f.level !== "ok").map((f) => [f.level, f.where]), [
      ["fault", "VESTIBULE_MAIL"],
      ["fault", "env"],
      ["warn", "env"],
      ["fault", "permissions"],
    ]);
    assert.equal(
      findings.find((f) => f.where === "env" && f.level === "fault")!.what,
      "the server would refuse to start: unknown variable VESTIBULE_BASEURL (expected: " +
        "VESTIBULE_BASE_URL)",
    );
  }, { stamped: true });
});

Deno.test("doctor: the SMTP server is asked EHLO and AUTH, and nothing is sent", async () => {
  const smtp = await startSmtpServer({ auth: { user: "doctor", pass: "right-pass" } });
  const smtpConfig = (pass: string) =>
    resolveConfig({
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_MAIL: `smtp://doctor:${pass}@127.0.0.1:${smtp.port}`,
      VESTIBULE_MAIL_FROM: "vestibule@example.com",
    });
  const mailFinding = async (pass: string) => {
    const store = await openKvStore(":memory:");
    try {
      const findings = await offlineChecks({ config: smtpConfig(pass), env: {}, store, staticDir });
      return findings.find((f) => f.where === "VESTIBULE_MAIL")!;
    } finally {
      store.close();
    }
  };
  try {
    const right = await mailFinding("right-pass");
    assert.equal(right.level, "ok");
    assert.match(right.what, new RegExp(`127\\.0\\.0\\.1:${smtp.port} answers EHLO and AUTH`));
    const wrong = await mailFinding("wrong-pass");
    assert.equal(wrong.level, "fault");
    assert.match(
      wrong.what,
      new RegExp(`^the SMTP server 127\\.0\\.0\\.1:${smtp.port} does not answer EHLO and AUTH: `),
    );
    assert.doesNotMatch(wrong.what, /wrong-pass/);
    assert.deepEqual(smtp.received, []);
  } finally {
    await smtp.close();
  }
});

Deno.test("doctor: check takes --live bare; a value for it is a usage error in plain words", async () => {
  await withStore(async (store) => {
    const run = adminRunner(store, { staticDir });
    const bad = await run("check", "--live=yes");
    assert.equal(bad.code, 2);
    assert.equal(bad.err, "vestibule admin check: --live: takes no value\nUsage: check [--live]");
    const offline = await run("check");
    assert.equal(offline.code, 1);
    assert.match(offline.out, /^fault the store has no signing key/m);
    assert.equal(offline.err, "vestibule admin check: 1 fault");
  }, { stamped: true });
});

Deno.test("doctor: the operator API's token file, checked as start-up checks it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withStore(async (store) => {
      await createSigningKeys({ store, now: Date.now }).current();
      const path = `${dir}/admin-token`;
      const withToken = resolveConfig({
        VESTIBULE_DATA: ":memory:",
        VESTIBULE_ADMIN_LISTEN: "127.0.0.1:9100",
        VESTIBULE_ADMIN_TOKEN_FILE: path,
      });
      await Deno.writeTextFile(path, "short\n", { mode: 0o600 });
      assert.deepEqual(
        faults(await offlineChecks({ config: withToken, env: {}, store, staticDir })),
        [{
          level: "fault",
          what: `the server would refuse to start: VESTIBULE_ADMIN_TOKEN_FILE="${path}": the ` +
            "token must be at least 32 characters (it has 5); make one with: openssl rand -base64 32",
          where: "VESTIBULE_ADMIN_TOKEN_FILE",
        }],
      );
      await Deno.writeTextFile(path, "s".repeat(32), { mode: 0o600 });
      const findings = await offlineChecks({ config: withToken, env: {}, store, staticDir });
      assert.deepEqual(faults(findings), []);
      assert.ok(findings.some((f) => f.where === "VESTIBULE_ADMIN_TOKEN_FILE" && f.level === "ok"));
    }, { stamped: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor: the events' secret file, checked as start-up checks it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withStore(async (store) => {
      await createSigningKeys({ store, now: Date.now }).current();
      const path = `${dir}/webhook.secret`;
      const config = resolveConfig({
        VESTIBULE_DATA: ":memory:",
        VESTIBULE_WEBHOOK_URL: "https://hooks.example.com/in",
        VESTIBULE_WEBHOOK_SECRET_FILE: path,
      });
      await Deno.writeTextFile(path, "hunter2\n", { mode: 0o600 });
      assert.deepEqual(faults(await offlineChecks({ config, env: {}, store, staticDir })), [{
        level: "fault",
        what: `the server would refuse to start: VESTIBULE_WEBHOOK_SECRET_FILE="${path}": must ` +
          "start with whsec_ (a Standard Webhooks secret)",
        where: "VESTIBULE_WEBHOOK_SECRET_FILE",
      }]);
      await Deno.writeTextFile(path, `whsec_${btoa("k".repeat(32))}\n`, { mode: 0o600 });
      const findings = await offlineChecks({ config, env: {}, store, staticDir });
      assert.deepEqual(faults(findings), []);
      assert.ok(
        findings.some((f) =>
          f.where === "VESTIBULE_WEBHOOK_SECRET_FILE" && f.level === "ok" &&
          f.what.endsWith("go to https://hooks.example.com")
        ),
      );
    }, { stamped: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor: the upstream token key file, loaded as start-up loads it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withStore(async (store) => {
      await createSigningKeys({ store, now: Date.now }).current();
      const path = `${dir}/upstream.key`;
      const config = resolveConfig({
        VESTIBULE_DATA: ":memory:",
        VESTIBULE_UPSTREAM_KEY_FILE: path,
      });
      const key = newVaultKey();
      await Deno.writeTextFile(path, `${key}\n`, { mode: 0o644 });
      await Deno.chmod(path, 0o644);
      assert.deepEqual(faults(await offlineChecks({ config, env: {}, store, staticDir })), [{
        level: "fault",
        what: `the upstream token keys do not load: VESTIBULE_UPSTREAM_KEY_FILE="${path}": ` +
          `${path} is open to group or others (mode 0644); make it owner-only: chmod 600 ${path}`,
        where: "VESTIBULE_UPSTREAM_KEY_FILE",
      }]);
      await Deno.chmod(path, 0o600);
      const findings = await offlineChecks({ config, env: {}, store, staticDir });
      assert.deepEqual(faults(findings), []);
      assert.ok(
        findings.some((f) => f.where === "VESTIBULE_UPSTREAM_KEY_FILE" && f.level === "ok"),
      );
      assert.ok(!JSON.stringify(findings).includes(key), "the key is never shown");
    }, { stamped: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("doctor: each shipped placeholder page is a fault on a public origin, a warning on loopback", async () => {
  await withStore(async (store) => {
    await createSigningKeys({ store, now: Date.now }).current();
    const files = [
      "static/pages/index.json",
      "static/legal/contact.html",
      "static/legal/privacy.html",
      "static/legal/terms.html",
    ];
    const shipped = `is Vestibule's shipped placeholder: write your own`;
    const publicConfig = resolveConfig({
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_BASE_URL: "https://acme.example",
      VESTIBULE_AUTH_URL: "https://auth.acme.example",
      VESTIBULE_API_URL: "https://api.acme.example",
      VESTIBULE_MAIL_LOG_PUBLIC: "on",
    });
    const served = await offlineChecks({ config: publicConfig, env: {}, store });
    assert.deepEqual(
      faults(served).map((f) => [f.what, f.where]),
      files.map((file) => [`${file} ${shipped}`, file]),
    );
    // The default origins are loopback: a fresh checkout's check has no fault for them.
    const local = await offlineChecks({ config, env: {}, store });
    assert.deepEqual(faults(local), []);
    assert.deepEqual(
      local.filter((f) => f.level === "warn").map((f) => [f.what, f.where]),
      files.map((file) => [`${file} ${shipped} before serving a public origin`, file]),
    );
    const edited = await offlineChecks({ config, env: {}, store, staticDir });
    assert.ok(edited.some((f) => f.level === "ok" && f.where === "static/"));
  }, { stamped: true });
});
