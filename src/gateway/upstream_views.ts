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
import { commitGroups, type CommitPart } from "../store/commit_groups.ts";
import type { AtomicCheck } from "../store/store.ts";
import { operatorEntry } from "../workspace/domain/audit.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";
import { type FirstListing, firstListingPending } from "../workspace/domain/upstream_pins.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import { servedToolName } from "../config/upstreams.ts";
import { countOf } from "../count_words.ts";
import type { UpstreamTool } from "./mcp_client.ts";
import type { LiveTool, LiveUpstream } from "./upstream_set.ts";

/** How long a business's pins, as read, stand for this process (another replica may approve). */
const PINS_FRESH_MS = 2_000;
/** Business views of an upstream kept at once. */
const CACHED_VIEWS = 1_000;
/** Definitions no store can hold, already logged (once per process each). */
const LOGGED_LEFT_OUT = 10_000;
/** How long one process may take to ask for an approval before another may ask instead. */
const ASKING_LEASE_MS = 60_000;
/** Tries at pinning a first listing that other processes keep pinning too. */
const FIRST_LISTING_TRIES = 5;

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

export interface UpstreamViewsDeps {
  readonly services: WorkspaceServices;
  readonly log: LogSink;
  readonly now: () => number;
}

export interface UpstreamViews {
  /** The caller's business's view of the upstream; an empty one when it cannot be built. */
  viewOf(live: LiveUpstream, auth: WorkspaceAuth): Promise<View>;
}

export function createUpstreamViews(deps: UpstreamViewsDeps): UpstreamViews {
  const { services, log, now } = deps;
  const { store, upstreamPins } = services.workspace;
  // Bounded as every cache of keys others choose (a business per sign-up): a view forgotten is
  // only built again.
  const views = new BoundedMap<string, View>(CACHED_VIEWS);
  const building = new Map<string, Promise<View>>();
  const loggedLeftOut = new BoundedMap<string, true>(LOGGED_LEFT_OUT);
  let serial = 0;

  /** The parts in bounded commits, each also checking `also`; false when one check failed. */
  const commitAll = async (parts: readonly CommitPart[], also: readonly AtomicCheck[] = []) => {
    for (const group of commitGroups(parts)) {
      const ok = await store.commit(
        [...also, ...group.flatMap((part) => part.checks)],
        group.flatMap((part) => part.mutations),
      );
      if (!ok) return false;
    }
    return true;
  };

  /**
   * The listed tools a store can hold; the others are logged, once per process each. Measuring
   * a definition is about as dear as storing it, so each listed tool's answer is kept with it
   * (per length of business id, which the record's key holds) for as long as it is listed.
   */
  const problems = new WeakMap<LiveTool, Map<number, string | null>>();
  const storable = (live: LiveUpstream, businessId: string, listed: readonly LiveTool[]) =>
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

  /**
   * Pins the first listing the business meets, in bounded commits: a mark says it is under way
   * (so a process stopped half-way, or another replica, carries on with the same meaning) and
   * each commit checks it unchanged; the last one marks it done, with the audit entry.
   */
  const pinFirstListing = async (
    live: LiveUpstream,
    businessId: string,
    tools: readonly LiveTool[],
    leftOut: number,
  ) => {
    const { name, title } = live.config;
    const key = upstreamPins.firstKey(businessId, name);
    for (let tries = 0; tries < FIRST_LISTING_TRIES; tries++) {
      const records = await upstreamPins.read(businessId, name);
      if (!firstListingPending(records)) return;
      let first = records.first;
      if (first === null) {
        const started: FirstListing = { done: false, startedAt: now() };
        await store.commit([{ key, version: null }], [{ type: "set", key, value: started }]);
        first = await store.get<FirstListing>(key);
        if (first === null || first.value.done) continue;
      }
      const mark = { key, version: first.version };
      const missing = tools.filter((tool) => !records.pins.has(tool.definition.name));
      const pinned = await commitAll(
        missing.map((tool) => ({
          checks: [{
            key: upstreamPins.pinKey(businessId, name, tool.definition.name),
            version: null,
          }],
          mutations: [upstreamPins.pin(businessId, name, {
            definition: tool.definition,
            hash: tool.hash,
            pinnedAt: now(),
            approvedBy: null,
          })],
        })),
        [mark],
      );
      if (!pinned) continue;
      const done: FirstListing = { ...first.value, done: true };
      const summary = `Pinned the definitions of the ${countOf(tools.length, "tool")} ${title} ` +
        `listed first` + (leftOut > 0 ? `; left out ${leftOut} no store can hold` : "");
      if (
        await store.commit([mark], [
          { type: "set", key, value: done },
          services.audit.entry(operatorEntry(businessId, null, "pin_upstream_tools", summary)),
        ])
      ) return;
    }
    throw new Error(`the first listing of ${name} kept changing under other processes`);
  };

  /**
   * Holds every tool that changed or appeared at once under one gate, mailed to the owners once.
   * One process asks: a short lease keeps replicas (and this one) from asking twice for the same
   * change; the others serve the changed tools as held meanwhile. Returns the gate, or null.
   */
  const holdChanges = async (
    live: LiveUpstream,
    auth: WorkspaceAuth,
    waiting: readonly { tool: LiveTool; previous: UpstreamTool | null }[],
  ): Promise<string | null> => {
    const { name, title } = live.config;
    const { businessId } = auth;
    const lease = upstreamPins.askingKey(businessId, name);
    const leased = await store.commit([{ key: lease, version: null }], [
      { type: "set", key: lease, value: now(), expireIn: ASKING_LEASE_MS },
    ]);
    if (!leased) return null;
    const changed = waiting.filter((w) => w.previous !== null).length;
    const requested = await services.gates.request({
      businessId,
      accountId: auth.accountId,
      clientId: auth.clientId,
      clientName: auth.clientName,
      tool: servedToolName(name, "*"),
      scope: `upstream.${name}`,
      action: {
        type: "approve_tool_definitions",
        upstream: name,
        changed,
        new: waiting.length - changed,
      },
    });
    if (!requested.ok) {
      await store.delete(lease);
      return null;
    }
    const gateId = requested.gate.id;
    await commitAll(waiting.map(({ tool, previous }) => ({
      checks: [],
      mutations: [upstreamPins.hold(businessId, name, tool.definition.name, {
        hash: tool.hash,
        change: previous === null ? "new" : "changed",
        gateId,
        seenAt: now(),
        definition: tool.definition,
      })],
    })));
    const events = await services.events.record(businessId, [{
      type: "upstream.definition_changed",
      data: { businessId, upstream: name, changed, new: waiting.length - changed, gateId },
    }]);
    await store.commit(events.checks, [...events.mutations, { type: "delete", key: lease }]);
    services.events.dispatch();
    logEvent(log, {
      level: "warn",
      message: "upstream changed or added tools: held until an owner approves them",
      upstream: name,
      changed,
      new: waiting.length - changed,
      gateId,
      title,
    });
    return gateId;
  };

  const buildView = async (
    live: LiveUpstream,
    auth: WorkspaceAuth,
    known: View | undefined,
  ): Promise<View> => {
    const generation = live.generation;
    const { businessId } = auth;
    const { name } = live.config;
    const listed = [...(live.tools?.values() ?? [])];
    const tools = storable(live, businessId, listed);
    let records = await upstreamPins.read(businessId, name);
    if (firstListingPending(records) && tools.length > 0) {
      await pinFirstListing(live, businessId, tools, listed.length - tools.length);
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

  return {
    async viewOf(live, auth) {
      const key = `${auth.businessId}\n${live.config.name}`;
      const known = views.get(key);
      if (known && known.generation === live.generation && now() - known.readAt < PINS_FRESH_MS) {
        return known;
      }
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
        }).finally(() => building.delete(key));
        building.set(key, pending);
      }
      const view = await pending;
      views.set(key, view);
      return view;
    },
  };
}
