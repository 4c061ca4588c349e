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
