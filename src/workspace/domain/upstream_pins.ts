/**
 * Pinned upstream tool definitions, per business: the definition of each upstream tool that the
 * business's people were first shown, or that an owner approved since. A definition the upstream
 * changed, or a tool it added after the first listing, is held (`UpstreamHold`, with the gate an
 * owner decides it by) until an owner approves it. Records lie under `["ws", businessId]`, so a
 * business's deletion and export take them along.
 *
 * Each definition is its own record, so one that no store can hold (limits.ts: a name past the
 * key's bound, a definition past the value's) is left out alone, never failing a commit.
 */
import { recordProblem } from "../../store/limits.ts";
import type { Entry, Key, Mutation, Store } from "../../store/store.ts";

/** A tool definition as an upstream listed it (the wire object, `name` its own). */
export type ToolDefinition = Readonly<Record<string, unknown>> & { readonly name: string };

export interface UpstreamPin {
  readonly definition: ToolDefinition;
  /** SHA-256 of the canonical definition. */
  readonly hash: string;
  readonly pinnedAt: number;
  /** The owner who approved it; null for the first listing. */
  readonly approvedBy: string | null;
}

export interface UpstreamHold {
  /** The definition waiting for an owner, by hash. */
  readonly hash: string;
  readonly change: "changed" | "new";
  readonly gateId: string;
  readonly seenAt: number;
  /**
   * The definition waiting, shown on its gate's page and pinned once approved. Absent in the
   * holds of single-tool gates (`approve_tool_definition`), whose action carries it.
   */
  readonly definition?: ToolDefinition;
  /** An owner left it out of the approval: it stays held until the upstream changes it. */
  readonly leftOut?: boolean;
}

/**
 * How far a business's first listing of an upstream is pinned: absent before it begins (or when
 * it was pinned before this record existed: pins without it are a finished first listing).
 */
export interface FirstListing {
  readonly done: boolean;
  readonly startedAt: number;
}

export interface PinRecords {
  readonly pins: ReadonlyMap<string, Entry<UpstreamPin>>;
  readonly holds: ReadonlyMap<string, Entry<UpstreamHold>>;
  readonly first: Entry<FirstListing> | null;
}

/** Whether the business's first listing of the upstream is still to be pinned, in whole or part. */
export function firstListingPending({ first, pins }: PinRecords): boolean {
  return first === null ? pins.size === 0 : !first.value.done;
}

export interface UpstreamPins {
  pinKey(businessId: string, upstream: string, tool: string): Key;
  holdKey(businessId: string, upstream: string, tool: string): Key;
  firstKey(businessId: string, upstream: string): Key;
  /** A short lease of the process asking an owner to approve what the upstream changed. */
  askingKey(businessId: string, upstream: string): Key;
  /** A business's pins and holds of one upstream, by tool name, and its first listing's state. */
  read(businessId: string, upstream: string): Promise<PinRecords>;
  pin(businessId: string, upstream: string, pin: UpstreamPin): Mutation;
  hold(businessId: string, upstream: string, tool: string, hold: UpstreamHold): Mutation;
  /** Why no store can hold this definition as a pin or a hold, in words; null when any can. */
  problem(businessId: string, upstream: string, definition: ToolDefinition): string | null;
}

export function createUpstreamPins(store: Store): UpstreamPins {
  const pinKey = (b: string, u: string, t: string): Key => ["ws", b, "upstream_pin", u, t];
  const holdKey = (b: string, u: string, t: string): Key => ["ws", b, "upstream_hold", u, t];
  const firstKey = (b: string, u: string): Key => ["ws", b, "upstream_first", u];
  const byTool = async <T>(prefix: Key) => {
    const found = new Map<string, Entry<T>>();
    for await (const entry of store.list<T>(prefix)) {
      found.set(String(entry.key[entry.key.length - 1]), entry);
    }
    return found;
  };
  return {
    pinKey,
    holdKey,
    firstKey,
    askingKey: (b, u) => ["ws", b, "upstream_asking", u],
    async read(businessId, upstream) {
      const [pins, holds, first] = await Promise.all([
        byTool<UpstreamPin>(["ws", businessId, "upstream_pin", upstream]),
        byTool<UpstreamHold>(["ws", businessId, "upstream_hold", upstream]),
        store.get<FirstListing>(firstKey(businessId, upstream)),
      ]);
      return { pins, holds, first };
    },
    pin: (businessId, upstream, pin) => ({
      type: "set",
      key: pinKey(businessId, upstream, pin.definition.name),
      value: pin,
    }),
    hold: (businessId, upstream, tool, hold) => ({
      type: "set",
      key: holdKey(businessId, upstream, tool),
      value: hold,
    }),
    // The hold is the larger of the two records that carry a definition: measured as one.
    problem: (businessId, upstream, definition) =>
      recordProblem(
        holdKey(businessId, upstream, definition.name),
        {
          hash: "0".repeat(64),
          change: "changed",
          gateId: crypto.randomUUID(),
          seenAt: Number.MAX_SAFE_INTEGER,
          definition,
          leftOut: false,
        } satisfies UpstreamHold,
      ),
  };
}
