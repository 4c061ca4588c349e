/**
 * What an upstream changed at once, held under one gate (`approve_tool_definitions`): the tools
 * as its page lists them, an owner leaving some out before approving, and the approved ones
 * served. A batch may hold 10,000 tools, more than one commit takes (store/limits.ts), so the
 * decision only approves the gate; its holds become pins afterwards, in bounded commits, by
 * whichever process next looks at the business's tools. Each of those commits checks its holds
 * as read, so running it twice, or on two replicas at once, pins nothing twice.
 */
import { BoundedMap } from "../../bounded_map.ts";
import { commitInGroups } from "../../store/commit_groups.ts";
import type { Entry, Store } from "../../store/store.ts";
import type { UpstreamCalls } from "./gate_actions.ts";
import type { Gate } from "./gate_record.ts";
import type { PinRecords, ToolDefinition, UpstreamHold, UpstreamPins } from "./upstream_pins.ts";

/** One tool of a batch, as its approval page shows it. */
export interface BatchTool {
  readonly tool: string;
  readonly change: "changed" | "new";
  readonly hash: string;
  readonly definition: ToolDefinition;
  /** The pinned definition it replaces; null for a new tool. */
  readonly previous: ToolDefinition | null;
  /** Whether each of its calls will need an owner's approval (the upstream's `gated` list). */
  readonly gated: boolean;
  readonly leftOut: boolean;
}

export interface DefinitionBatches {
  /** The tools still held under the gate, in name order. */
  read(gate: Gate): Promise<BatchTool[]>;
  /** Leaves these tools of a pending batch out of its approval; returns how many were. */
  leaveOut(gate: Gate, tools: ReadonlySet<string>): Promise<number>;
  /** Pins what approved gates hold among `records`; returns how many tools it pinned. */
  serveApproved(businessId: string, upstream: string, records: PinRecords): Promise<number>;
}

export interface DefinitionBatchesDeps {
  readonly store: Store;
  readonly pins: UpstreamPins;
  readonly upstreams: UpstreamCalls;
  readonly gate: (gateId: string) => Promise<Gate | null>;
  readonly now: () => number;
}

/** Decided gates remembered (a decision never changes): a view's every look reads none again. */
const DECIDED_KEPT = 10_000;

export function createDefinitionBatches(deps: DefinitionBatchesDeps): DefinitionBatches {
  const { store, pins } = deps;
  const decided = new BoundedMap<string, Gate>(DECIDED_KEPT);
  const decidedGate = async (gateId: string) => {
    const known = decided.get(gateId);
    if (known !== undefined) return known;
    const gate = await deps.gate(gateId);
    if (gate !== null && gate.status !== "pending") decided.set(gateId, gate);
    return gate?.status === "pending" ? null : gate;
  };
  const heldUnder = async (gate: Gate) => {
    if (gate.action.type !== "approve_tool_definitions") return null;
    const upstream = gate.action.upstream;
    const records = await pins.read(gate.businessId, upstream);
    const held = [...records.holds.entries()].filter(([, hold]) =>
      hold.value.gateId === gate.id && hold.value.definition !== undefined
    );
    return { upstream, records, held };
  };

  /** Writes the given holds' definitions as pins approved by `approvedBy`, bounded per commit. */
  const pinHolds = async (
    businessId: string,
    upstream: string,
    held: readonly Entry<UpstreamHold>[],
    approvedBy: string | null,
  ) => {
    const parts = held.map((hold) => ({
      checks: [{ key: hold.key, version: hold.version }],
      mutations: [
        pins.pin(businessId, upstream, {
          definition: hold.value.definition!,
          hash: hold.value.hash,
          pinnedAt: deps.now(),
          approvedBy,
        }),
        { type: "delete" as const, key: hold.key },
      ],
    }));
    // A hold changed meanwhile (the upstream changed the tool again): the next look decides.
    return await commitInGroups(store, parts);
  };

  return {
    async read(gate) {
      const found = await heldUnder(gate);
      if (found === null) return [];
      return found.held.map(([tool, { value }]) => ({
        tool,
        change: value.change,
        hash: value.hash,
        definition: value.definition!,
        previous: found.records.pins.get(tool)?.value.definition ?? null,
        gated: deps.upstreams.gated(found.upstream, tool),
        leftOut: value.leftOut === true,
      }));
    },

    async leaveOut(gate, tools) {
      const found = await heldUnder(gate);
      if (found === null || gate.status !== "pending") return 0;
      const parts = found.held.filter(([tool]) => tools.has(tool)).map(([tool, hold]) => ({
        checks: [{ key: hold.key, version: hold.version }],
        mutations: [
          pins.hold(gate.businessId, found.upstream, tool, { ...hold.value, leftOut: true }),
        ],
      }));
      return await commitInGroups(store, parts);
    },

    async serveApproved(businessId, upstream, records) {
      const byGate = new Map<string, Entry<UpstreamHold>[]>();
      for (const hold of records.holds.values()) {
        if (hold.value.definition === undefined || hold.value.leftOut === true) continue;
        const list = byGate.get(hold.value.gateId) ?? [];
        list.push(hold);
        byGate.set(hold.value.gateId, list);
      }
      let pinned = 0;
      for (const [gateId, held] of byGate) {
        const gate = await decidedGate(gateId);
        if (gate?.status !== "approved" || !gate.applied) continue;
        pinned += await pinHolds(businessId, upstream, held, gate.decidedBy);
      }
      return pinned;
    },
  };
}
