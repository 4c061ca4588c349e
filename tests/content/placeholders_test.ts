import assert from "node:assert/strict";
import {
  fingerprint,
  placeholdersLeft,
  SHIPPED_PLACEHOLDERS,
} from "../../src/content/placeholders.ts";
import { STATIC_DIR } from "../../src/content/templates.ts";
import { editedStaticDir } from "../blackbox/support/main_process.ts";

Deno.test("each shipped placeholder's fingerprint is the SHA-256 of its file in static/", async (t) => {
  for (const [name, shipped] of Object.entries(SHIPPED_PLACEHOLDERS)) {
    await t.step(name, async () => {
      const text = await Deno.readTextFile(new URL(name, STATIC_DIR));
      assert.equal(
        await fingerprint(text),
        shipped,
        `static/${name} changed: update its fingerprint in src/content/placeholders.ts`,
      );
    });
  }
});

Deno.test("the shipped pages are placeholders until the operator edits them", async () => {
  assert.deepEqual(await placeholdersLeft(), [
    "static/pages/index.json",
    "static/legal/contact.html",
    "static/legal/privacy.html",
    "static/legal/terms.html",
  ]);
  const edited = await editedStaticDir();
  try {
    assert.deepEqual(await placeholdersLeft(edited), []);
  } finally {
    await Deno.remove(edited, { recursive: true });
  }
});
