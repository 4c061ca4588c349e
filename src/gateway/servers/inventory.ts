/**
 * What the servers page (/account/servers) shows of a business's upstreams, read and never
 * written: the live set as this process knows it (state, last problem, what it lists), the
 * business's pins and holds (workspace/domain/upstream_pins.ts), and the person's own connection
 * of a per-person upstream. Reading builds no view and pins nothing: opening the page never
 * changes what agents are served (upstream_views.ts does that, on an agent's listing).
 */
import type {
  ToolDefinition,
  UpstreamHold,
  UpstreamPin,
  UpstreamPins,
} from "../../workspace/domain/upstream_pins.ts";
import type { Connections } from "../connect/connections.ts";
import type { ConnectionView } from "../connect/connection_store.ts";
import { serves } from "../upstream_calls.ts";
import type { LiveUpstream, UpstreamState } from "../upstream_set.ts";

/** One tool of an upstream as its owners see it. */
export interface ToolRow {
  readonly name: string;
  /** Its `title` (or `annotations.title`); null when it gives none. */
  readonly title: string | null;
  readonly description: string | null;
  /** The scope a token needs to call it. */
  readonly scope: string;
  readonly gated: boolean;
  /** Named `hidden` in the file: never listed to agents nor callable. */
  readonly hidden: boolean;
  /** Whether the upstream lists it now (a pinned tool it stopped listing is not served). */
  readonly listed: boolean;
  /** The definition agents are shown, as pinned for the business; null before any pin. */
  readonly pin: UpstreamPin | null;
  /** A change (or a new tool) waiting for an owner's approval. */
  readonly hold: Pick<UpstreamHold, "gateId" | "change" | "leftOut"> | null;
  /** Why no store can hold its definition (so it is left out), in words; else null. */
  readonly leftOut: string | null;
}

export interface UpstreamRow {
  readonly name: string;
  readonly title: string;
  readonly state: UpstreamState;
  /** When it stopped answering, while down. */
  readonly downSince: number | null;
  /** The last listing's or call's failure, or why it is held, in words; else null. */
  readonly problem: string | null;
  /** Each person signs in to it as themselves (their own connection). */
  readonly personal: boolean;
  /** The viewer's own connection of a per-person upstream; null otherwise or when none. */
  readonly own: ConnectionView | null;
  /** Its tools for an owner (hidden ones included, marked), at most TOOLS_SHOWN; empty for a member. */
  readonly tools: readonly ToolRow[];
  /** How many more it has than `tools` shows. */
  readonly toolsNotShown: number;
}

/** Tools shown per upstream: an upstream may list 10,000, and a page of them all is megabytes. */
export const TOOLS_SHOWN = 500;

export interface ServerInventoryDeps {
  /** The live upstreams now. */
  readonly upstreams: () => readonly LiveUpstream[];
  readonly pins: Pick<UpstreamPins, "read" | "problem">;
  /** People's connections; null without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connections: Pick<Connections, "get"> | null;
}

export interface ServerInventory {
  /** The upstreams serving the business, in file order; `owner` adds each one's tools. */
  of(businessId: string, accountId: string, owner: boolean): Promise<UpstreamRow[]>;
}

export function createServerInventory(deps: ServerInventoryDeps): ServerInventory {
  const toolsOf = async (live: LiveUpstream, businessId: string) => {
    const { config } = live;
    const records = await deps.pins.read(businessId, config.name);
    const listed = live.tools ?? new Map();
    // Listed tools in listing order, then pinned ones no longer listed, then hidden names.
    const names = [...new Set([...listed.keys(), ...records.pins.keys(), ...config.hidden])];
    const notShown = Math.max(0, names.length - TOOLS_SHOWN);
    const rows = names.slice(0, TOOLS_SHOWN).map((name): ToolRow => {
      const pin = records.pins.get(name)?.value ?? null;
      const hold = records.holds.get(name)?.value ?? null;
      const live = listed.get(name);
      // What agents are shown: the pinned definition, else the one listed (not yet pinned).
      const definition: ToolDefinition | null = pin?.definition ??
        (live?.definition as ToolDefinition | undefined) ?? null;
      return {
        name,
        title: _text(definition?.title) ?? _text(_object(definition?.annotations)?.title),
        description: _text(definition?.description),
        scope: config.toolScopes.get(name) ?? `upstream.${config.name}`,
        gated: config.gated.has(name),
        hidden: config.hidden.has(name),
        listed: live !== undefined,
        pin,
        // A hold of another definition than the one listed now is asked again on the next look.
        hold: hold === null || (live !== undefined && hold.hash !== live.hash) ? null : hold,
        leftOut: live === undefined
          ? null
          : deps.pins.problem(businessId, config.name, live.definition as ToolDefinition),
      };
    });
    return { rows, notShown };
  };

  const rowOf = async (
    live: LiveUpstream,
    businessId: string,
    accountId: string,
    owner: boolean,
  ): Promise<UpstreamRow> => {
    const { config } = live;
    const personal = config.auth !== null;
    const own = personal && deps.connections !== null
      ? await deps.connections.get(config.name, { businessId, accountId })
      : null;
    const tools = owner ? await toolsOf(live, businessId) : { rows: [], notShown: 0 };
    return {
      name: config.name,
      title: config.title,
      state: live.state,
      downSince: live.downSince,
      problem: live.problem,
      personal,
      own,
      tools: tools.rows,
      toolsNotShown: tools.notShown,
    };
  };

  return {
    async of(businessId, accountId, owner) {
      const serving = deps.upstreams().filter((live) => serves(live.config, businessId));
      return await Promise.all(
        serving.map((live) => rowOf(live, businessId, accountId, owner)),
      );
    },
  };
}

const _text = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value : null;

const _object = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
