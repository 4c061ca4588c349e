/**
 * The canonical JSON of a value (RFC 8785's rules for what JSON.parse produces: object members
 * sorted by their names' UTF-16 code units, no whitespace, numbers and strings as ECMAScript
 * serializes them) and its SHA-256: two calls with the same arguments hash alike however their
 * members were ordered, and a tool definition hashes alike however its server wrote it.
 */
import { hash } from "node:crypto";

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((name) => record[name] !== undefined)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`);
  return `{${members.join(",")}}`;
}

/**
 * Lowercase hex SHA-256 of the canonical JSON. Synchronous (node:crypto is built into Deno): on
 * every upstream call, Web Crypto's digest would cost a trip to a worker thread and back; and in
 * one step, without a Hash object (a quarter of the time on Node.js).
 */
export function canonicalSha256(value: unknown): string {
  return hash("sha256", canonicalJson(value), "hex");
}

/** Members in a stable order, indented: the same value always reads the same (pages, mails). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2);
}
