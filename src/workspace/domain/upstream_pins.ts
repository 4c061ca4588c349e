/**
 * Pinned upstream tool definitions, per business: the definition of each upstream tool that the
 * business's people were first shown, or that an owner approved since. A definition the upstream
 * changed, or a tool it added after the first listing, is held (`UpstreamHold`, with the gate an
 * owner decides it by) until an owner approves it. Records lie under `["ws", businessId]`, so a
 * business's deletion and export take them along.
 */
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
}

export interface UpstreamPins {
  pinKey(businessId: string, upstream: string, tool: string): Key;
  holdKey(businessId: string, upstream: string, tool: string): Key;
  /** A business's pins and holds of one upstream, by tool name. */
  read(businessId: string, upstream: string): Promise<{
    readonly pins: ReadonlyMap<string, Entry<UpstreamPin>>;
    readonly holds: ReadonlyMap<string, Entry<UpstreamHold>>;
  }>;
  pin(businessId: string, upstream: string, pin: UpstreamPin): Mutation;
}

export function createUpstreamPins(store: Store): UpstreamPins {
  const pinKey = (b: string, u: string, t: string): Key => ["ws", b, "upstream_pin", u, t];
  const holdKey = (b: string, u: string, t: string): Key => ["ws", b, "upstream_hold", u, t];
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
    async read(businessId, upstream) {
      const [pins, holds] = await Promise.all([
        byTool<UpstreamPin>(["ws", businessId, "upstream_pin", upstream]),
        byTool<UpstreamHold>(["ws", businessId, "upstream_hold", upstream]),
      ]);
      return { pins, holds };
    },
    pin: (businessId, upstream, pin) => ({
      type: "set",
      key: pinKey(businessId, upstream, pin.definition.name),
      value: pin,
    }),
  };
}
