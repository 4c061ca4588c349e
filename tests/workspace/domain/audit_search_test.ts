import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { type AuditLog, createAuditLog } from "../../../src/workspace/domain/audit.ts";
import {
  afterUtcDay,
  auditFacets,
  type AuditFilter,
  type AuditPage,
  decodeAuditCursor,
  encodeAuditCursor,
  searchAudit,
  utcDayStart,
} from "../../../src/workspace/domain/audit_search.ts";

const DAY = 86_400_000;
const START = Date.UTC(2026, 2, 1, 12);

/**
 * A log of `count` entries, one an hour from START (entry i at START + i hours), alternating two
 * clients and actions; the summary is the entry's number.
 */
async function logOf(
  count: number,
  extra: (i: number) => Partial<{ accountId: string }> = () => ({}),
) {
  const clock = { t: START };
  const store = await openKvStore(":memory:", () => clock.t);
  const audit = createAuditLog(store, () => clock.t);
  for (let i = 0; i < count; i++) {
    clock.t = START + i * 3_600_000;
    await audit.append({
      businessId: "b1",
      accountId: extra(i).accountId ?? "acc-1",
      actor: "agent",
      clientId: i % 2 === 0 ? "even-client" : "odd-client",
      action: i % 3 === 0 ? "rename_business" : "create_record",
      summary: String(i),
      gateId: null,
    });
  }
  // Another business's entries never show.
  await audit.append({
    businessId: "b2",
    accountId: "acc-1",
    actor: "agent",
    clientId: "even-client",
    action: "rename_business",
    summary: "other business",
    gateId: null,
  });
  return { audit, close: () => store.close() };
}

const numbers = (page: AuditPage) => page.entries.map((e) => Number(e.entry.summary));
const limits = { pageSize: 5, scanLimit: 1_000 };

/** Every page from the newest, following `older`. */
async function allPages(audit: AuditLog, filter: AuditFilter, scanLimit = 1_000) {
  const pages: AuditPage[] = [];
  let page = await searchAudit(audit, "b1", filter, null, { pageSize: 5, scanLimit });
  pages.push(page);
  while (page.older !== null) {
    page = await searchAudit(audit, "b1", filter, {
      direction: "older",
      position: page.older,
    }, { pageSize: 5, scanLimit });
    pages.push(page);
  }
  return pages;
}

Deno.test("audit search pages newest first, older pages without overlap or gap", async () => {
  const { audit, close } = await logOf(12);
  try {
    const pages = await allPages(audit, {});
    assert.deepEqual(pages.map(numbers), [[11, 10, 9, 8, 7], [6, 5, 4, 3, 2], [1, 0]]);
    assert.equal(pages[0]!.newer, null, "the newest page has nothing newer");
    assert.notEqual(pages[1]!.newer, null);
    assert.equal(pages[2]!.older, null, "the oldest page has nothing older");
  } finally {
    await close();
  }
});

Deno.test("audit search goes back to newer pages; the newest one is the first page itself", async () => {
  const { audit, close } = await logOf(12);
  try {
    const [, second, third] = await allPages(audit, {});
    const back = await searchAudit(audit, "b1", {}, {
      direction: "newer",
      position: third!.newer!,
    }, limits);
    assert.deepEqual(numbers(back), [6, 5, 4, 3, 2]);
    assert.deepEqual(back.older, second!.older);
    const first = await searchAudit(audit, "b1", {}, {
      direction: "newer",
      position: second!.newer!,
    }, limits);
    assert.deepEqual(numbers(first), [11, 10, 9, 8, 7]);
    assert.equal(first.newer, null);
  } finally {
    await close();
  }
});

Deno.test("audit search filters combine, and their pages keep to them", async () => {
  const { audit, close } = await logOf(30, (i) => ({ accountId: i < 10 ? "acc-1" : "acc-2" }));
  try {
    const filter: AuditFilter = { clientId: "even-client", action: "rename_business" };
    // Even and a multiple of three: multiples of six.
    assert.deepEqual((await allPages(audit, filter)).map(numbers), [[24, 18, 12, 6, 0]]);
    assert.deepEqual(
      (await allPages(audit, { ...filter, accountId: "acc-2" })).map(numbers),
      [[24, 18, 12]],
    );
    const day = utcDayStart("2026-03-02")!; // entries 12 to 35 fall on 2 March
    assert.deepEqual(
      (await allPages(audit, { clientId: "odd-client", fromMs: day, untilMs: afterUtcDay(day) }))
        .map(numbers),
      [[29, 27, 25, 23, 21], [19, 17, 15, 13]],
    );
    assert.deepEqual((await allPages(audit, { untilMs: day })).flatMap(numbers).length, 12);
    assert.deepEqual((await allPages(audit, { fromMs: day + DAY })).flatMap(numbers), []);
  } finally {
    await close();
  }
});

Deno.test("audit search reads at most the scan limit, and the cursor reads on from there", async () => {
  const { audit, close } = await logOf(40);
  try {
    // Rare matches: each request reads 15 entries, then hands on where it stopped.
    const pages = await allPages(audit, {
      action: "rename_business",
      clientId: "odd-client",
      accountId: "acc-1",
    }, 15);
    const odd3 = [39, 33, 27, 21, 15, 9, 3]; // odd multiples of three
    assert.deepEqual(pages.flatMap(numbers), odd3);
    assert.ok(pages.some((page) => page.stoppedEarly && page.older !== null));
    assert.ok(pages.length > 1);
  } finally {
    await close();
  }
});

Deno.test("audit facets list the agents, people and actions of the newest entries", async () => {
  const { audit, close } = await logOf(6, (i) => ({ accountId: `acc-${i % 2}` }));
  try {
    assert.deepEqual(await auditFacets(audit, "b1"), {
      clientIds: ["odd-client", "even-client"],
      accountIds: ["acc-1", "acc-0"],
      actions: ["create_record", "rename_business"],
    });
    assert.deepEqual((await auditFacets(audit, "b1", 1)).actions, ["create_record"]);
    // A member's page: only their own entries' agents and actions.
    assert.deepEqual(await auditFacets(audit, "b1", 1_000, "acc-0"), {
      clientIds: ["even-client"],
      accountIds: ["acc-0"],
      actions: ["create_record", "rename_business"],
    });
  } finally {
    await close();
  }
});

Deno.test("audit cursors round-trip, and anything else reads as no cursor", () => {
  const position = [9_000_000_000, 9_999_999_999_998, "a-uuid"] as const;
  assert.deepEqual(decodeAuditCursor(encodeAuditCursor(position)), position);
  for (
    const bad of ["", "!!", "bm90IGpzb24", btoa('["a",1,"x"]'), btoa("[1,2]"), "A".repeat(201)]
  ) {
    assert.equal(decodeAuditCursor(bad), null, bad);
  }
});

Deno.test("a date field is a real UTC day or nothing", () => {
  assert.equal(utcDayStart("2026-03-02"), Date.UTC(2026, 2, 2));
  for (const bad of ["2026-02-30", "2026-13-01", "02/03/2026", "2026-3-2", ""]) {
    assert.equal(utcDayStart(bad), null, bad);
  }
});
