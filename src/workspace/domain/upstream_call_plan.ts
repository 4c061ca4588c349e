/** How an approved upstream call is applied (gate_plans.ts holds the table of planners). */
import type { ActionOf, Approval, Plan, PlanDeps } from "./gate_actions.ts";

/** Nothing changes in the store: the call is made after the decision's commit, exactly once. */
export function planCallUpstream(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"call_upstream">,
  _approval: Approval,
): Promise<Plan> {
  const title = deps.upstreams.title(action.upstream, businessId);
  if (deps.now() > action.expiresAt) {
    return Promise.resolve({
      ok: false,
      reason: `The request expired at ${
        new Date(action.expiresAt).toISOString()
      }; the upstream was not called`,
      checks: [],
    });
  }
  if (title === null) {
    return Promise.resolve({
      ok: false,
      reason: `The upstream ${action.upstream} no longer serves this business`,
      checks: [],
    });
  }
  return Promise.resolve({
    ok: true,
    checks: [],
    mutations: [],
    event: {
      type: "upstream.call_approved",
      data: {
        upstream: action.upstream,
        tool: action.tool,
        argumentsSha256: action.argumentsSha256,
      },
    },
    outcome: `Call the tool ${action.tool} of ${title} once, with the arguments shown`,
    after: (gate) => deps.upstreams.callApproved(gate, action),
  });
}
