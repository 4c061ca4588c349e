/**
 * What the gateway writes of a business's pins (workspace/domain/upstream_pins.ts): the first
 * listing it meets, and the tools an upstream changed at once, held under one gate. Each is
 * written in commits every store takes (store/commit_groups.ts), however many tools there are.
 */
import { logEvent, type LogSink } from "../http/request_log.ts";
import { commitInGroups } from "../store/commit_groups.ts";
import { operatorEntry } from "../workspace/domain/audit.ts";
import { type FirstListing, firstListingPending } from "../workspace/domain/upstream_pins.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import { servedToolName } from "../config/upstreams.ts";
import { countOf } from "../count_words.ts";
import type { UpstreamTool } from "./mcp_client.ts";
import type { LiveTool, LiveUpstream } from "./upstream_set.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";

/** How long one process may take to ask for an approval before another may ask instead. */
const ASKING_LEASE_MS = 60_000;
/** Tries at pinning a first listing that other processes keep pinning too. */
const FIRST_LISTING_TRIES = 5;

export interface PinningDeps {
  readonly services: WorkspaceServices;
  readonly log: LogSink;
  readonly now: () => number;
}

/**
 * Pins the first listing the business meets, in bounded commits: a mark says it is under way
 * (so a process stopped half-way, or another replica, carries on with the same meaning) and
 * each commit checks it unchanged; the last one marks it done, with the audit entry.
 */
export async function pinFirstListing(
  deps: PinningDeps,
  live: LiveUpstream,
  businessId: string,
  tools: readonly LiveTool[],
  leftOut: number,
): Promise<void> {
  const { services, now } = deps;
  const { store, upstreamPins } = services.workspace;
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
    const parts = missing.map((tool) => ({
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
    }));
    if (await commitInGroups(store, parts, [mark]) < parts.length) continue;
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
}

/**
 * Holds every tool that changed or appeared at once under one gate, mailed to the owners once.
 * One process asks: a short lease keeps replicas (and this one) from asking twice for the same
 * change; the others serve the changed tools as held meanwhile. Returns the gate, or null.
 */
export async function holdChanges(
  deps: PinningDeps,
  live: LiveUpstream,
  auth: WorkspaceAuth,
  waiting: readonly { tool: LiveTool; previous: UpstreamTool | null }[],
): Promise<string | null> {
  const { services, log, now } = deps;
  const { store, upstreamPins } = services.workspace;
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
      ...(waiting.length === 1 ? { tool: waiting[0]!.tool.definition.name } : {}),
    },
  });
  if (!requested.ok) {
    await store.delete(lease);
    return null;
  }
  const gateId = requested.gate.id;
  await commitInGroups(
    store,
    waiting.map(({ tool, previous }) => ({
      checks: [],
      mutations: [upstreamPins.hold(businessId, name, tool.definition.name, {
        hash: tool.hash,
        change: previous === null ? "new" : "changed",
        gateId,
        seenAt: now(),
        definition: tool.definition,
      })],
    })),
  );
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
}
