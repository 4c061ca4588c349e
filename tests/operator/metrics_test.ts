import assert from "node:assert/strict";
import { Counter, Histogram } from "../../src/operator/metrics.ts";

Deno.test("counter: one series per label set, values escaped as the text format says", () => {
  const counter = new Counter("t_total", "Things.");
  counter.inc({ kind: 'a"b\\c\nd' });
  counter.inc({ kind: 'a"b\\c\nd' }, 2);
  counter.inc();
  assert.equal(
    counter.render(),
    '# HELP t_total Things.\n# TYPE t_total counter\nt_total{kind="a\\"b\\\\c\\nd"} 3\nt_total 1\n',
  );
});

Deno.test("histogram: buckets are cumulative, +Inf is the count, sum adds the values", () => {
  const histogram = new Histogram("d_seconds", "Durations.", [0.1, 1]);
  for (const value of [0.05, 0.1, 0.5, 7]) histogram.observe(value, { origin: "base" });
  assert.equal(
    histogram.render(),
    "# HELP d_seconds Durations.\n# TYPE d_seconds histogram\n" +
      'd_seconds_bucket{origin="base",le="0.1"} 2\n' +
      'd_seconds_bucket{origin="base",le="1"} 3\n' +
      'd_seconds_bucket{origin="base",le="+Inf"} 4\n' +
      'd_seconds_sum{origin="base"} 7.65\n' +
      'd_seconds_count{origin="base"} 4\n',
  );
});

Deno.test("a kept series adds to the same sample as the same labels given each time", () => {
  const counter = new Counter("t_total", "Things.");
  const kept = counter.series({ origin: "base" });
  kept.inc();
  kept.inc(2);
  counter.inc({ origin: "base" });
  const histogram = new Histogram("d_seconds", "Durations.", [1]);
  const series = histogram.series({ origin: "base" });
  series.observe(0.5);
  series.observe(2);
  histogram.observe(0.25, { origin: "base" });
  assert.equal(
    counter.render() + histogram.render(),
    '# HELP t_total Things.\n# TYPE t_total counter\nt_total{origin="base"} 4\n' +
      "# HELP d_seconds Durations.\n# TYPE d_seconds histogram\n" +
      'd_seconds_bucket{origin="base",le="1"} 2\n' +
      'd_seconds_bucket{origin="base",le="+Inf"} 3\n' +
      'd_seconds_sum{origin="base"} 2.75\n' +
      'd_seconds_count{origin="base"} 3\n',
  );
});
