import assert from "node:assert/strict";
import {
  BackupError,
  decodeValue,
  encodeValue,
  exportLines,
  importBackup,
  parseBackup,
} from "../../src/store/backup.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "./store_contract.ts";

Deno.test("values JSON cannot carry round-trip through their tags", () => {
  const value = {
    bytes: new Uint8Array([0, 255, 7]),
    big: 12345678901234567890n,
    when: new Date("2026-01-02T03:04:05.678Z"),
    odd: [NaN, Infinity, -Infinity],
    tagLike: { $bytes: "not bytes" },
    nested: [{ plain: "text", n: 1.5, flag: true, none: null }],
  };
  const line = JSON.stringify(encodeValue(value, ["k"]));
  assert.deepEqual(decodeValue(JSON.parse(line), "line 2"), value);
});

Deno.test("a value a backup cannot carry is named with its key", () => {
  assert.throws(
    () => encodeValue({ m: new Map() }, ["a", 1]),
    (e: Error) =>
      e instanceof BackupError && e.message.includes('["a",1]') && /Map/.test(e.message),
  );
});

Deno.test("expiry round-trips as an absolute time", async () => {
  const clock = manualClock();
  const source = await openKvStore(":memory:", clock.now);
  const target = await openKvStore(":memory:", clock.now);
  try {
    await source.set(["soon"], "x", { expireIn: 60_000 });
    await source.set(["gone"], "y", { expireIn: 1_000 });
    await source.set(["kept"], new Uint8Array([1, 2]));
    const text = (await exportLines(source, clock.now, 2)).join("\n");
    assert.match(text, new RegExp(new Date(clock.now() + 60_000).toISOString()));
    clock.advance(30_000); // the restore happens later: "gone" has expired, "soon" has 30 s left
    assert.equal(await importBackup(target, parseBackup(text), clock.now), 2);
    assert.equal((await target.get(["soon"]))?.value, "x");
    assert.equal(await target.get(["gone"]), null);
    assert.deepEqual((await target.get(["kept"]))?.value, new Uint8Array([1, 2]));
    clock.advance(30_000);
    assert.equal(await target.get(["soon"]), null);
  } finally {
    source.close();
    target.close();
  }
});

Deno.test("a non-empty store is refused and keeps what it had", async () => {
  const store = await openKvStore(":memory:");
  try {
    await store.set(["mine"], 1);
    const backup = parseBackup((await exportLines(store, Date.now, 2)).join("\n"));
    await assert.rejects(() => importBackup(store, backup, Date.now), /not empty/);
    assert.equal((await store.get(["mine"]))?.value, 1);
  } finally {
    store.close();
  }
});

Deno.test("a malformed backup is refused before anything is written, naming the line", () => {
  const header = JSON.stringify({
    vestibule: "backup",
    format: 1,
    schema: 2,
    exportedAt: "2026-01-01T00:00:00.000Z",
    records: 1,
  });
  const refused = (text: string, message: RegExp) =>
    assert.throws(
      () => parseBackup(text),
      (e: Error) => e instanceof BackupError && message.test(e.message),
    );
  refused("", /line 1: expected the header/);
  refused('{"vestibule":"other"}', /line 1 \(the header\): "vestibule": must be "backup"/);
  refused('{"nope":1}', /^line 1 \(the header\): "vestibule" is missing$/);
  refused(
    `${header}\n{"key":["a"],"value":1,"expiresAt":null,"expires":1}`,
    /^line 2: "expires" is not a known field$/,
  );
  refused(`${header}\nnot json`, /line 2: expected a record/);
  refused(`${header}\n{"key":[],"value":1,"expiresAt":null}`, /line 2: "key": must not be empty/);
  refused(
    `${header}\n{"key":["a"],"value":{"$bigint":"x"},"expiresAt":null}`,
    /line 2: malformed \$bigint/,
  );
  refused(header, /announces 1 record and the file holds 0/);
});
