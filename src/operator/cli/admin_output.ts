// What admin commands print for a person: JSON whose times read as ISO 8601 in UTC (records
// keep epoch milliseconds; they are converted here, at the edge, for every command at once), and
// plain tables.

/** A result as printed: each time field (`at`, or a name ending in `At`) in ISO 8601, UTC. */
export function adminJson(result: unknown): string {
  return JSON.stringify(result, _times, 2);
}

function _times(key: string, value: unknown): unknown {
  if (typeof value !== "number" || !(key === "at" || key.endsWith("At"))) return value;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? value : time.toISOString();
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]) {
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0))
  );
  return [header, ...rows].map((row) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i]!)).join("  ")
  ).join("\n");
}
