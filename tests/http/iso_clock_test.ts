import assert from "node:assert/strict";
import { isoClock } from "../../src/http/iso_clock.ts";

Deno.test("isoClock gives toISOString's text for every time, repeated, later or earlier", () => {
  const isoTime = isoClock();
  const times = [0, 1_795_424_103_985, 1_795_424_103_985, 1_795_424_103_986, 1_795_424_103_000, 0];
  for (const ms of times) assert.equal(isoTime(ms), new Date(ms).toISOString());
});
