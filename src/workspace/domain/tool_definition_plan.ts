/** How an approved upstream tool definition is applied (gate_plans.ts holds the planners). */
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
