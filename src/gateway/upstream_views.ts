/**
 * Each business's view of each upstream: which of its tools the business is served, and in which
 * definition (workspace/domain/upstream_pins.ts). The first listing a business meets is pinned as
 * it is; a definition that changes afterwards keeps being listed as pinned but cannot be called,
 * and a tool that appears afterwards is not listed, until an owner approves: every tool that
 * changed at once is held under one gate (mailed to the owners once, audited, one event), and an
 * approved gate's tools are pinned here, on the next look (definition_batches.ts). A tool the
 * upstream stops listing is not listed; its pin stays, so it comes back as it was unless it
 * changed.
 *
 * An upstream may list 10,000 tools, and any definition: everything is written in commits every
 * store takes (store/commit_groups.ts), a definition no store can hold is left out and logged, and
 * a view that cannot be built costs only that upstream, never the caller's request.
 */
import { BoundedMap } from "../bounded_map.ts";
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { firstListingPending } from "../workspace/domain/upstream_pins.ts";
import type { Workspace } from "../workspace/domain/workspace.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import type { UpstreamTool } from "./mcp_client.ts";
import { holdChanges, pinFirstListing, type PinningDeps } from "./upstream_pinning.ts";
import type { LiveTool, LiveUpstream } from "./upstream_set.ts";

/** How long a business's pins, as read, stand for this process (another replica may approve). */
const PINS_FRESH_MS = 2_000;
/** Business views of an upstream kept at once. */
const CACHED_VIEWS = 1_000;
/** Definitions no store can hold, already logged (once per process each). */
const LOGGED_LEFT_OUT = 10_000;

/** One upstream tool as a business sees it. */
export interface ViewEntry {
  readonly tool: string;
  /** The pinned definition, which is what is listed, and its hash. */
  readonly definition: UpstreamTool;
  readonly hash: string;
  /** Set while the upstream lists a definition other than the pinned one. */
  readonly heldBy: string | null;
}

export interface View {
  readonly generation: number;
  readonly readAt: number;
  readonly entries: readonly ViewEntry[];
  /** Changes with every rebuilt view (in the caller's stamp). */
  readonly serial: number;
}

/** What a view reads and writes with: the workspace's records, the log, the clock. */
export type UpstreamViewsDeps = PinningDeps;

export interface UpstreamViews {
  /**
   * The caller's business's view of the upstream; an empty one when it cannot be built. At once
   * when it is known (the usual case: no await per call), else once built.
   */
  viewOf(live: LiveUpstream, auth: WorkspaceAuth): View | Promise<View>;
  /** Resolves once every view being built is done (shutdown). */
  settle(): Promise<void>;
}

export function createUpstreamViews(deps: UpstreamViewsDeps): UpstreamViews {
  const { services, log, now } = deps;
  const { upstreamPins } = services.workspace;
  // Bounded as every cache of keys others choose (a business per sign-up): a view forgotten is
  // only built again.
  const views = new BoundedMap<string, View>(CACHED_VIEWS);
  const building = new Map<string, Promise<View>>();
  let serial = 0;

  const storableOf = _storableTools(upstreamPins, log);

  const buildView = async (
    live: LiveUpstream,
    auth: WorkspaceAuth,
    known: View | undefined,
  ): Promise<View> => {
    const generation = live.generation;
    const { businessId } = auth;
    const { name } = live.config;
    const listed = [...(live.tools?.values() ?? [])];
    const tools = storableOf(live, businessId, listed);
    let records = await upstreamPins.read(businessId, name);
    if (firstListingPending(records) && tools.length > 0) {
      await pinFirstListing(deps, live, businessId, tools, listed.length - tools.length);
      records = await upstreamPins.read(businessId, name);
    }
    if (await services.definitionBatches.serveApproved(businessId, name, records) > 0) {
      records = await upstreamPins.read(businessId, name);
    }
    // Per listed tool: served as pinned, held (by a gate, or still to be asked), or not listed.
    type Waiting = { waiting: LiveTool; previous: ViewEntry | null };
    const served: (ViewEntry | Waiting | null)[] = tools.map((tool) => {
      const toolName = tool.definition.name;
      const pin = records.pins.get(toolName)?.value;
      if (pin?.hash === tool.hash) {
        return { tool: toolName, definition: tool.definition, hash: tool.hash, heldBy: null };
      }
      const previous = pin === undefined ? null : {
        tool: toolName,
        definition: pin.definition as UpstreamTool,
        hash: pin.hash,
        heldBy: "",
      };
      const hold = records.holds.get(toolName)?.value;
      if (hold?.hash !== tool.hash) return { waiting: tool, previous };
      // A new tool is not listed until approved; a changed one is listed as it was approved.
      return previous === null ? null : { ...previous, heldBy: hold.gateId };
    });
    const waiting = served.filter((item): item is Waiting => item !== null && "waiting" in item);
    const gateId = waiting.length === 0 ? null : await holdChanges(
      deps,
      live,
      auth,
      waiting.map((w) => ({ tool: w.waiting, previous: w.previous?.definition ?? null })),
    );
    const entries: ViewEntry[] = [];
    for (const item of served) {
      if (item === null) continue;
      if (!("waiting" in item)) entries.push(item);
      else if (item.previous !== null) entries.push({ ...item.previous, heldBy: gateId ?? "" });
    }
    // The same entries as before keep their serial, so callers' tool lists stay as built.
    const same = known !== undefined && known.entries.length === entries.length &&
      known.entries.every((entry, i) =>
        entry.tool === entries[i]!.tool && entry.hash === entries[i]!.hash &&
        entry.heldBy === entries[i]!.heldBy
      );
    return { generation, readAt: now(), entries, serial: same ? known.serial : ++serial };
  };

  /** Builds the view again (once at a time per business and upstream), and keeps it. */
  const rebuild = (key: string, live: LiveUpstream, auth: WorkspaceAuth, known?: View) => {
    let pending = building.get(key);
    if (pending === undefined) {
      pending = buildView(live, auth, known).catch((error: unknown) => {
        // One upstream's view costs only its own tools: the last one built, or none, for now.
        logEvent(log, {
          level: "error",
          message: "upstream tools of a business could not be read or pinned: left out for now",
          upstream: live.config.name,
          businessId: auth.businessId,
          ...describeError(error),
        });
        const view: View = {
          generation: live.generation,
          readAt: now(),
          entries: known?.entries ?? [],
          serial: known?.serial ?? ++serial,
        };
        return view;
      }).then((view) => {
        views.set(key, view);
        return view;
      }).finally(() => building.delete(key));
      building.set(key, pending);
    }
    return pending;
  };

  // A reload puts a new live upstream in a changed one's place: its views start afresh, and the
  // old one's age out of the cache.
  const lives = new WeakMap<LiveUpstream, number>();
  let lifeCount = 0;
  const lifeOf = (live: LiveUpstream) => {
    let life = lives.get(live);
    if (life === undefined) lives.set(live, life = ++lifeCount);
    return life;
  };

  return {
    viewOf(live, auth) {
      const key = `${auth.businessId}\n${live.config.name}\n${lifeOf(live)}`;
      const known = views.get(key);
      if (known === undefined || known.generation !== live.generation) {
        return rebuild(key, live, auth, known);
      }
      // The same listing: only the business's records may have changed since (an approval on
      // another replica). The view as built serves while they are read again, so no request
      // waits for a read of 10,000 pins.
      if (now() - known.readAt >= PINS_FRESH_MS) void rebuild(key, live, auth, known);
      return known;
    },
    async settle() {
      await Promise.all(building.values());
    },
  };
}

/**
 * The listed tools a store can hold; the others are logged, once per process each. Measuring
 * a definition is about as dear as storing it, so each listed tool's answer is kept with it
 * (per length of business id, which the record's key holds) for as long as it is listed.
 */
function _storableTools(
  upstreamPins: Workspace["upstreamPins"],
  log: LogSink,
): (live: LiveUpstream, businessId: string, listed: readonly LiveTool[]) => LiveTool[] {
  const problems = new WeakMap<LiveTool, Map<number, string | null>>();
  const loggedLeftOut = new BoundedMap<string, true>(LOGGED_LEFT_OUT);
  return (live, businessId, listed) =>
    listed.filter((tool) => {
      let known = problems.get(tool);
      if (known === undefined) problems.set(tool, known = new Map());
      let problem = known.get(businessId.length);
      if (problem === undefined) {
        problem = upstreamPins.problem(businessId, live.config.name, tool.definition);
        known.set(businessId.length, problem);
      }
      if (problem === null) return true;
      const name = tool.definition.name.slice(0, 200);
      const logged = `${live.config.name}\n${name}\n${tool.hash}`;
      if (loggedLeftOut.get(logged) === undefined) {
        loggedLeftOut.set(logged, true);
        logEvent(log, {
          level: "warn",
          message: "upstream tool definition no store can hold: left out",
          upstream: live.config.name,
          tool: name,
          problem,
        });
      }
      return false;
    });
}
