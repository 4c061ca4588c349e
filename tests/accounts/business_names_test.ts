import assert from "node:assert/strict";
import { businessLabels, sameBusinessName } from "../../src/accounts/business_names.ts";

Deno.test("a business name is compared without case or extra spaces", () => {
  assert.ok(sameBusinessName("Acme Bakery", "  acme   BAKERY "));
  assert.ok(!sameBusinessName("Acme Bakery", "Acme Bakery 2"));
});

Deno.test("only a repeated name carries its creation moment and short id", () => {
  const at = Date.UTC(2026, 10, 29, 10, 2);
  const acme = { id: "3f2a9c1b-0000-4000-8000-000000000001", name: "Acme", createdAt: at };
  const twin = { id: "77aa0011-0000-4000-8000-000000000002", name: "ACME", createdAt: at };
  const other = { id: "99bb0022-0000-4000-8000-000000000003", name: "Bravo", createdAt: at };
  const label = businessLabels([acme, twin, other]);
  assert.equal(label(acme), "Acme (created 2026-11-29 10:02 UTC, id 3f2a9c1b)");
  assert.equal(label(twin), "ACME (created 2026-11-29 10:02 UTC, id 77aa0011)");
  assert.equal(label(other), "Bravo");
  assert.equal(businessLabels([acme])(acme), "Acme");
});
