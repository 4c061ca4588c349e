// `deno task admin` as its own process reads the configuration as the server does: an unknown
// VESTIBULE_* variable stops a command, and `check` lists it as a fault among the others.
import assert from "node:assert/strict";
import { adminProcess, ROOT } from "../support/main_process.ts";

Deno.test("an unknown variable stops an admin command, and check reports it as a fault", async () => {
  const admin = await adminProcess(ROOT.pathname);
  const env = { VESTIBULE_DATA: ":memory:", VESTIBULE_MAIL_FORM: "no-reply@example.com" };
  const line = "unknown variable VESTIBULE_MAIL_FORM (expected: VESTIBULE_MAIL_FROM)";
  const refused = await admin(env, ["list-businesses"]);
  assert.equal(refused.code, 2);
  assert.equal(refused.stderr, `vestibule admin: configuration error: ${line}\n`);
  assert.equal(refused.stdout, "");
  const checked = await admin(env, ["check"]);
  assert.equal(checked.code, 1, checked.stderr);
  assert.ok(
    checked.stdout.split("\n").includes(`fault the server would refuse to start: ${line} (env)`),
    checked.stdout,
  );
});

Deno.test("usage, help and a wrong command line open no store, and make none", async () => {
  const admin = await adminProcess(ROOT.pathname);
  const data = `data/test-admin-${crypto.randomUUID()}.sqlite`;
  const env = { VESTIBULE_DATA: data };
  const made = () => Deno.stat(new URL(data, ROOT)).then(() => true, () => false);
  try {
    const lines: [string[], number][] = [
      [[], 2],
      [["--help"], 0],
      [["list-accounts", "--help"], 0],
      [["lsit-accounts"], 2],
      [["create-business", "--owner", "owner@example.com"], 2],
      [["list-accounts", "--all"], 2],
    ];
    for (const [args, code] of lines) {
      const run = await admin(env, args);
      assert.equal(run.code, code, `${args.join(" ")}: ${run.stderr}`);
      assert.equal(await made(), false, `admin ${args.join(" ")} made ${data}`);
    }
    const listed = await admin(env, ["list-accounts"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(await made(), true);
  } finally {
    for (const suffix of ["", "-wal", "-shm"]) {
      await Deno.remove(new URL(`${data}${suffix}`, ROOT)).catch(() => {});
    }
  }
});
