/**
 * A small metrics registry rendered in the Prometheus text format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): counters, gauges read at
 * scrape time and histograms with fixed buckets. Label values must come from bounded sets:
 * each distinct set of values is a series kept for the life of the process.
 */

type Labels = Readonly<Record<string, string>>;

/** Seconds; the default buckets of the Prometheus client libraries. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** One labelled series of a counter: kept by a caller whose labels recur, it adds in place. */
export interface CounterSeries {
  inc(by?: number): void;
}

/** One labelled series of a histogram, as CounterSeries is of a counter. */
export interface HistogramSeries {
  observe(value: number): void;
}

export class Counter {
  readonly #values = new Map<string, { value: number }>();
  readonly name: string;
  readonly help: string;
  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }
  inc(labels: Labels = {}, by = 1): void {
    this.#cell(labels).value += by;
  }
  /** The series of `labels`; its `inc` builds no label text (the request path keeps these). */
  series(labels: Labels): CounterSeries {
    const cell = this.#cell(labels);
    return { inc: (by = 1) => void (cell.value += by) };
  }
  #cell(labels: Labels): { value: number } {
    const key = _labelText(labels);
    let cell = this.#values.get(key);
    if (cell === undefined) this.#values.set(key, cell = { value: 0 });
    return cell;
  }
  render(): string {
    return _family(
      this.name,
      this.help,
      "counter",
      [...this.#values].map(([k, c]) => [k, c.value]),
    );
  }
}

interface _HistogramCells {
  /** The count in each bucket (not cumulative). */
  readonly buckets: number[];
  count: number;
  sum: number;
}

export class Histogram {
  readonly #series = new Map<string, _HistogramCells>();
  readonly name: string;
  readonly help: string;
  readonly bounds: readonly number[];
  constructor(name: string, help: string, bounds: readonly number[] = DURATION_BUCKETS) {
    this.name = name;
    this.help = help;
    this.bounds = bounds;
  }
  observe(value: number, labels: Labels = {}): void {
    this.#record(this.#cells(labels), value);
  }
  /** The series of `labels`; its `observe` builds no label text. */
  series(labels: Labels): HistogramSeries {
    const cells = this.#cells(labels);
    return { observe: (value) => this.#record(cells, value) };
  }
  #cells(labels: Labels): _HistogramCells {
    const key = _labelText(labels);
    let cells = this.#series.get(key);
    if (cells === undefined) {
      this.#series.set(key, cells = { buckets: this.bounds.map(() => 0), count: 0, sum: 0 });
    }
    return cells;
  }
  #record(cells: _HistogramCells, value: number): void {
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) {
        cells.buckets[i]!++;
        break;
      }
    }
    cells.count++;
    cells.sum += value;
  }
  render(): string {
    const samples: [string, number, string][] = [];
    for (const [key, series] of this.#series) {
      let cumulative = 0;
      for (const [i, bound] of this.bounds.entries()) {
        cumulative += series.buckets[i]!;
        samples.push([_withLabel(key, "le", String(bound)), cumulative, "_bucket"]);
      }
      samples.push([_withLabel(key, "le", "+Inf"), series.count, "_bucket"]);
      samples.push([key, series.sum, "_sum"], [key, series.count, "_count"]);
    }
    return `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n` +
      samples.map(([key, value, suffix]) => `${this.name}${suffix}${key} ${value}\n`).join("");
  }
}

/** A gauge whose samples are read when scraped (from the store, the process). */
export interface Gauge {
  readonly name: string;
  readonly help: string;
  read(): Promise<readonly (readonly [Labels, number])[]>;
}

export function renderGauge(gauge: Gauge, samples: readonly (readonly [Labels, number])[]): string {
  return _family(
    gauge.name,
    gauge.help,
    "gauge",
    samples.map(([labels, value]) => [_labelText(labels), value]),
  );
}

function _family(
  name: string,
  help: string,
  type: string,
  samples: readonly (readonly [string, number])[],
): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n` +
    samples.map(([key, value]) => `${name}${key} ${value}\n`).join("");
}

/** `{a="x",b="y"}`, or "" without labels; values escaped as the format says. */
function _labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) =>
    `${k}="${v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`
  );
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function _withLabel(key: string, name: string, value: string): string {
  const label = `${name}="${value}"`;
  return key === "" ? `{${label}}` : `${key.slice(0, -1)},${label}}`;
}
