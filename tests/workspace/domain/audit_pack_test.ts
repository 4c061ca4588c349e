// Packs in the audit log (src/workspace/domain/audit.ts): upstream calls' entries of one business
// stamped one after another in one millisecond are stored under one key, and the log reads as it
// would without them: the same entries in the same order, every position a place to read on from
// in either direction, and what the audit export emits.
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { recordProblem } from "../../../src/store/limits.ts";
import { openSqliteStore } from "../../../src/store/sqlite_store.ts";
import type { Durability, Mutation, Store } from "../../../src/store/store.ts";
import { NO_TRACING } from "../../../src/tracing/tracing.ts";
import {
  _packed,
  type AuditEntry,
  type AuditLog,
  createAuditLog,
  type NewAuditEntry,
} from "../../../src/workspace/domain/audit.ts";
import { withAuditExport } from "../../../src/workspace/domain/audit_export.ts";
import {
  decodeAuditCursor,
  encodeAuditCursor,
} from "../../../src/workspace/domain/audit_search.ts";

const entry = (summary: string, businessId = "b1"): NewAuditEntry => ({
  businessId,
  accountId: "acc",
  actor: "agent",
  clientId: "c",
  action: "tiny__add",
  summary,
  gateId: null,
});

/** The commits' writes through `store`, as they were handed to it. */
function recording(store: Store): { store: Store; writes: Mutation[][] } {
  const writes: Mutation[][] = [];
  return {
    writes,
    store: {
      ...store,
      commit(checks, mutations, options) {
        writes.push([...mutations]);
        return store.commit(checks, mutations, options);
      },
    },
  };
}

/**
 * Bursts appended in turn (each burst in one turn, in one millisecond of the clock), every entry
 * with `durability`: the same log packed ("deferred") and as single keys ("synced").
 */
async function logOf(
  durability: Durability,
  bursts: readonly [number, NewAuditEntry[]][],
  open: () => Promise<Store> = () => openKvStore(":memory:"),
) {
  const clock = { t: 0 };
  const kv = await open();
  const { store, writes } = recording(kv);
  const audit = createAuditLog(store, () => clock.t);
  for (const [at, burst] of bursts) {
    clock.t = at;
    await Promise.all(burst.map((fields) => audit.append(fields, durability)));
  }
  return { audit, writes, close: () => kv.close() };
}

const BURSTS: [number, NewAuditEntry[]][] = [
  [1_000, ["a0", "a1", "a2", "a3", "a4"].map((s) => entry(s))],
  [1_000, [entry("single")]],
  [1_001, [entry("b0"), entry("b1"), entry("other", "b2"), entry("b2"), entry("b3")]],
  [1_002, [entry("c0")]],
  [1_003, ["d0", "d1", "d2"].map((s) => entry(s))],
];

async function read(audit: AuditLog, options: Parameters<AuditLog["scan"]>[1] = {}) {
  const read = [];
  for await (const item of audit.scan("b1", options)) read.push(item);
  return read;
}

Deno.test("packed, the log reads the same entries in the same order as unpacked", async () => {
  const packed = await logOf("deferred", BURSTS);
  const single = await logOf("synced", BURSTS);
  try {
    const summaries = (items: { entry: AuditEntry }[]) => items.map((item) => item.entry.summary);
    const expected = ["d2", "d1", "d0", "c0", "b3", "b2", "b1", "b0", "single"]
      .concat(["a4", "a3", "a2", "a1", "a0"]);
    assert.deepEqual(summaries(await read(single.audit)), expected);
    assert.deepEqual(summaries(await read(packed.audit)), expected);
    assert.deepEqual(summaries(await read(packed.audit, { newer: true })), expected.toReversed());
    assert.deepEqual((await packed.audit.list("b1", { limit: 4 })).map((e) => e.summary), [
      "d2",
      "d1",
      "d0",
      "c0",
    ]);
    // Five, one, then b1's two and b2's one and b1's two (another business ends a run), one, one
    // pack of three: 7 keys for 15 entries, where each entry was a key of its own.
    assert.deepEqual(packed.writes.map((w) => w.length), [1, 1, 3, 1, 1]);
    assert.deepEqual(single.writes.map((w) => w.length), [5, 1, 5, 1, 3]);
    assert.equal(Array.isArray((packed.writes[0]![0] as { value: unknown }).value), true);
  } finally {
    packed.close();
    single.close();
  }
});

Deno.test("from every position, reading on goes past it in either direction", async (t) => {
  for (
    const [name, open] of [
      ["Deno KV", () => openKvStore(":memory:")],
      ["SQLite", () => openSqliteStore(":memory:")],
    ] as const
  ) {
    await t.step(name, () => readOnFromEveryPosition(open));
  }
});

async function readOnFromEveryPosition(open: () => Promise<Store>) {
  const { audit, close } = await logOf("deferred", BURSTS, open);
  try {
    const all = await read(audit);
    const ids = all.map((item) => item.entry.id);
    for (const [k, { position }] of all.entries()) {
      // A position survives the cursor it travels in.
      assert.deepEqual(decodeAuditCursor(encodeAuditCursor(position)), position);
      const older = await read(audit, { after: position });
      assert.deepEqual(older.map((item) => item.entry.id), ids.slice(k + 1), `older than ${k}`);
      const newer = await read(audit, { after: position, newer: true });
      assert.deepEqual(
        newer.map((item) => item.entry.id),
        ids.slice(0, k).toReversed(),
        `newer than ${k}`,
      );
      if (position.length !== 4) continue;
      // The pack's own key (a made-up position): all of the pack is older, none of it newer.
      const first = k - Number(position[3]);
      const key = position.slice(0, 3);
      const fromKey = await read(audit, { after: key });
      assert.deepEqual(fromKey.map((item) => item.entry.id), ids.slice(first), `older than ${key}`);
      const newerThanKey = await read(audit, { after: key, newer: true });
      assert.deepEqual(newerThanKey.map((item) => item.entry.id), ids.slice(0, first).toReversed());
    }
  } finally {
    await close();
  }
}

Deno.test("a run ends at another business, a synced entry, a new millisecond or a gap", () => {
  let sequence = 0;
  const item = (
    summary: string,
    options: { businessId?: string; at?: number; durability?: Durability; skip?: boolean } = {},
  ) => {
    sequence += options.skip ? 2 : 1;
    const record = { id: summary, at: options.at ?? 5, ...entry(summary, options.businessId) };
    return { record, sequence, key: [summary], durability: options.durability ?? "deferred" };
  };
  const mutations = _packed([
    item("a0"),
    item("a1"),
    item("b0", { businessId: "b2" }),
    item("c0"),
    item("c1", { durability: "synced" }),
    item("d0"),
    item("d1", { at: 6 }),
    item("e0", { at: 6, skip: true }),
    item("e1", { at: 6 }),
  ]);
  const shapes = mutations.map((m) =>
    m.type === "set" && Array.isArray(m.value)
      ? `${m.key[0]}:[${m.value.map((e: AuditEntry) => e.summary).join(",")}]`
      : String(m.key[0])
  );
  assert.deepEqual(shapes, ["a1:[a1,a0]", "b0", "c0", "c1", "d0", "d1", "e1:[e1,e0]"]);
});

Deno.test("a pack stays within what every store holds in one value", async () => {
  const long = "x".repeat(6_000);
  const bursts: [number, NewAuditEntry[]][] = [
    [1_000, Array.from({ length: 12 }, (_, i) => entry(`${i} ${long}`))],
  ];
  const { audit, writes, close } = await logOf("deferred", bursts);
  try {
    const sets = writes.flat().filter((m) => m.type === "set");
    assert.ok(sets.length > 1, "more than one pack");
    for (const set of sets) assert.equal(recordProblem(set.key, set.value), null);
    const read = (await audit.list("b1")).map((e) => Number(e.summary.split(" ")[0]));
    assert.deepEqual(read, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
  } finally {
    close();
  }
});

Deno.test("the audit export emits a pack's entries in the order they happened", async () => {
  const kv = await openKvStore(":memory:");
  const emitted: string[] = [];
  const tracing = {
    ...NO_TRACING,
    emit: (record: { attributes: Record<string, unknown> }) =>
      emitted.push(String(record.attributes["vestibule.audit.id"])),
  };
  try {
    const audit = createAuditLog(withAuditExport(kv, tracing), () => 1_000);
    await Promise.all(["a0", "a1", "a2"].map((s) => audit.append(entry(s), "deferred")));
    const stored = (await audit.list("b1")).map((e) => e.id);
    assert.deepEqual(emitted, stored.toReversed());
  } finally {
    kv.close();
  }
});

Deno.test("a cursor inside a pack names a place in it, never a fraction or less than 0", () => {
  const position = [9_000_000_000, 9_999_999_999_998, "a-uuid", 3] as const;
  assert.deepEqual(decodeAuditCursor(encodeAuditCursor(position)), position);
  for (const index of [-1, 1.5, "3"]) {
    const cursor = encodeAuditCursor([9_000_000_000, 9_999_999_999_998, "a-uuid", index]);
    assert.equal(decodeAuditCursor(cursor), null, String(index));
  }
});
