import assert from "node:assert/strict";
import { loadWebhookTarget, WebhookTargetError } from "../../src/events/webhook_target.ts";

Deno.test("the events' secret file: read when owner-only, refused in one line naming the variable otherwise", async (t) => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/webhook.secret`;
  const load = () => loadWebhookTarget({ url: "https://hooks.example.com/in", secretFile: file });
  const refused = (message: string) =>
    assert.rejects(
      load(),
      new WebhookTargetError(
        `VESTIBULE_WEBHOOK_SECRET_FILE=${JSON.stringify(file)}: ${message}`,
      ),
    );
  try {
    assert.equal(await loadWebhookTarget(null), null);
    await t.step("missing", async () => {
      await assert.rejects(
        load(),
        /^WebhookTargetError: VESTIBULE_WEBHOOK_SECRET_FILE=.*No such file/,
      );
    });
    await t.step("not a secret", async () => {
      await Deno.writeTextFile(file, "hunter2\n", { mode: 0o600 });
      await refused("must start with whsec_ (a Standard Webhooks secret)");
    });
    await t.step("open to others", async () => {
      await Deno.writeTextFile(file, `whsec_${btoa("k".repeat(32))}\n`);
      await Deno.chmod(file, 0o644);
      await refused(
        `${file} is open to group or others (mode 0644); make it owner-only: chmod 600 ${file}`,
      );
    });
    await t.step("owner-only and well formed", async () => {
      await Deno.chmod(file, 0o600);
      const target = await load();
      assert.equal(target?.url, "https://hooks.example.com/in");
      assert.equal(target?.key.algorithm.name, "HMAC");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
