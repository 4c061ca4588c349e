/** How approved upstream tool definitions are applied (gate_plans.ts holds the planners). */
import { countOf } from "../../count_words.ts";
import {
  type ActionOf,
  type Approval,
  type Plan,
  type PlanDeps,
  unchanged,
} from "./gate_actions.ts";
import type { UpstreamHold, UpstreamPin } from "./upstream_pins.ts";

/**
 * The pin becomes the approved definition, and the hold that asked for it goes, unless the
 * upstream changed the tool again meanwhile (that hold waits for its own decision).
 */
export async function planApproveToolDefinition(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"approve_tool_definition">,
  approval: Approval,
): Promise<Plan> {
  const pins = deps.workspace.upstreamPins;
  const title = deps.upstreams.title(action.upstream, businessId) ?? action.upstream;
  const holdKey = pins.holdKey(businessId, action.upstream, action.tool);
  const pinKey = pins.pinKey(businessId, action.upstream, action.tool);
  const [hold, pin] = await Promise.all([
    deps.workspace.store.get<UpstreamHold>(holdKey),
    deps.workspace.store.get<UpstreamPin>(pinKey),
  ]);
  const definition = { ...action.definition, name: action.tool };
  const words = action.change === "new"
    ? `Serve the new tool ${action.tool} of ${title}`
    : `Serve the changed definition of the tool ${action.tool} of ${title}`;
  return {
    ok: true,
    checks: [unchanged(holdKey, hold), unchanged(pinKey, pin)],
    mutations: [
      pins.pin(businessId, action.upstream, {
        definition,
        hash: action.hash,
        pinnedAt: deps.now(),
        approvedBy: approval.accountId,
      }),
      ...(hold?.value.hash === action.hash ? [{ type: "delete" as const, key: holdKey }] : []),
    ],
    event: {
      type: "upstream.definition_approved",
      data: {
        upstream: action.upstream,
        tool: action.tool,
        change: action.change,
        sha256: action.hash,
      },
    },
    outcome: words,
  };
}

/**
 * What an upstream changed at once, as one approval: asked, it names how many tools; decided, the
 * tools still held under the gate and not left out are served. Their pins are written by the
 * gateway's next look at the business's tools (definition_batches.ts `serveApproved`), in
 * commits of a bounded size, since a batch may hold more than one commit takes.
 */
export async function planApproveToolDefinitions(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"approve_tool_definitions">,
  approval: Approval,
): Promise<Plan> {
  const title = deps.upstreams.title(action.upstream, businessId) ?? action.upstream;
  const event = (data: Record<string, unknown>) => ({
    type: "upstream.definition_approved",
    data: { upstream: action.upstream, ...data },
  });
  // Asked: the summary counts what the change held.
  if (approval.gateId === "") {
    const kinds = [
      action.changed > 0 ? countOf(action.changed, "changed tool definition") : "",
      action.new > 0 ? countOf(action.new, "new tool") : "",
    ].filter((words) => words !== "").join(" and ");
    return {
      ok: true,
      checks: [],
      mutations: [],
      event: event({}),
      outcome: `Serve ${kinds} of ${title}`,
    };
  }
  const { holds } = await deps.workspace.upstreamPins.read(businessId, action.upstream);
  const mine = [...holds.values()].filter((hold) => hold.value.gateId === approval.gateId);
  const served = mine.filter((hold) => hold.value.leftOut !== true).length;
  const leftOut = mine.length - served;
  if (served === 0) {
    return {
      ok: false,
      reason: mine.length === 0
        ? `${title} changed each of these tools again since; each change waits for its own approval`
        : "every tool was left out",
      checks: [],
    };
  }
  return {
    ok: true,
    checks: [],
    mutations: [],
    event: event({ tools: served, leftOut }),
    outcome: `Serve ${countOf(served, "tool")} of ${title} as it lists them now` +
      (leftOut > 0 ? `; ${leftOut} left out stay held` : ""),
  };
}
