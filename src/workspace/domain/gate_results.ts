/**
 * What an approved upstream call answered, kept apart from its gate. A store record holds at
 * most 64 KiB (store/limits.ts) and an upstream may answer up to its `maxResponseBytes` (4 MiB by
 * default), so the result's JSON is cut into parts under `["ws", businessId, "gate_result",
 * gateId, n]` (a business's deletion takes them), a few parts a commit (KV takes at most 800 KiB
 * in one), before the gate records how many there are: a gate that names a count has them all.
 */
import type { Mutation, Store } from "../../store/store.ts";
import type { Gate } from "./gate_record.ts";

/** UTF-16 code units per part: at most 60 000 bytes however a store serialises them. */
const PART_CHARS = 30_000;
/** Parts per commit: under 500 000 bytes, well inside KV's 800 KiB a commit. */
const PARTS_PER_COMMIT = 8;

type Result = Readonly<Record<string, unknown>>;

const _prefix = (gate: Pick<Gate, "businessId" | "id">) => [
  "ws",
  gate.businessId,
  "gate_result",
  gate.id,
];

/**
 * Writes the result's parts, kept as long as the business or for `expireIn` ms (a relayed task's
 * result, which goes with its task); returns how many there are.
 */
export async function storeGateResult(
  store: Store,
  gate: Pick<Gate, "businessId" | "id">,
  result: Result,
  expireIn?: number,
): Promise<number> {
  const parts = _cut(JSON.stringify(result));
  for (let first = 0; first < parts.length; first += PARTS_PER_COMMIT) {
    const mutations: Mutation[] = parts.slice(first, first + PARTS_PER_COMMIT).map((part, i) => ({
      type: "set",
      key: [..._prefix(gate), first + i],
      value: part,
      ...(expireIn === undefined ? {} : { expireIn }),
    }));
    await store.commit([], mutations);
  }
  return parts.length;
}

/** The approved call's result: kept on the gate by earlier versions, or in its parts; else null. */
export async function readGateResult(store: Store, gate: Gate): Promise<Result | null> {
  if (gate.result !== undefined) return gate.result;
  if (gate.resultParts === undefined) return null;
  return await readResultParts(store, gate, gate.resultParts);
}

/**
 * A result kept in `count` parts by storeGateResult, under any id of the business (a relayed
 * upstream task's too: gateway/relayed_tasks.ts); null when they are not all there.
 */
export async function readResultParts(
  store: Store,
  owner: Pick<Gate, "businessId" | "id">,
  count: number,
): Promise<Result | null> {
  const parts: string[] = [];
  for await (const part of store.list<string>(_prefix(owner))) parts.push(part.value);
  return parts.length === count ? JSON.parse(parts.join("")) : null;
}

/** Cuts text into parts, never between the two halves of a surrogate pair. */
function _cut(text: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + PART_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}
