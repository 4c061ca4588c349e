/**
 * How an approved upstream call is applied (gate_plans.ts holds the table of planners). An
 * approval runs only the definition the owner could read when deciding: when deciding, and again
 * just before calling, the tool must still be listed, not hidden, and served in the definition
 * pinned for the business when the call was requested (not held for an owner's look).
 */
import type { Entry, Key } from "../../store/store.ts";
import {
  type ActionOf,
  type AfterApproval,
  type Approval,
  type Plan,
  type PlanDeps,
  unchanged,
} from "./gate_actions.ts";
import type { UpstreamPin } from "./upstream_pins.ts";

type CallAction = ActionOf<"call_upstream">;

/** Nothing changes in the store: the call is made after the decision's commit, exactly once. */
export async function planCallUpstream(
  deps: PlanDeps,
  businessId: string,
  action: CallAction,
  _approval: Approval,
): Promise<Plan> {
  if (deps.now() > action.expiresAt) {
    return {
      ok: false,
      reason: `The request expired at ${
        new Date(action.expiresAt).toISOString()
      }; the upstream was not called`,
      checks: [],
    };
  }
  const { pin, refusal } = await _callable(deps, businessId, action);
  // A pin approved meanwhile decides again.
  const checks = pin === undefined ? [] : [unchanged(pin.key, pin.entry)];
  if (refusal !== null) return { ok: false, reason: refusal, checks };
  return {
    ok: true,
    checks,
    mutations: [],
    event: {
      type: "upstream.call_approved",
      data: {
        upstream: action.upstream,
        tool: action.tool,
        argumentsSha256: action.argumentsSha256,
      },
    },
    outcome: `Call the tool ${action.tool} of ${
      deps.upstreams.title(action.upstream, businessId)
    } once, with the arguments shown`,
    async after(gate) {
      const { refusal } = await _callable(deps, gate.businessId, action);
      return refusal === null
        ? await deps.upstreams.callApproved(gate, action)
        : _refused(action, refusal);
    },
  };
}

/** Why the tool cannot be called as requested, or null; with the pin read, if any. */
async function _callable(
  deps: PlanDeps,
  businessId: string,
  action: CallAction,
): Promise<{
  pin?: { key: Key; entry: Entry<UpstreamPin> | null };
  refusal: string | null;
}> {
  const { upstream, tool } = action;
  const title = deps.upstreams.title(upstream, businessId);
  if (title === null) {
    return { refusal: `The upstream ${upstream} no longer serves this business` };
  }
  const key = deps.workspace.upstreamPins.pinKey(businessId, upstream, tool);
  const entry = await deps.workspace.store.get<UpstreamPin>(key);
  const pin = { key, entry };
  const listed = deps.upstreams.listed(upstream, tool);
  const notCalled = "so the call was not made";
  if (listed === "hidden") {
    return { pin, refusal: `The operator hides the tool ${tool} of ${title} now, ${notCalled}` };
  }
  if (listed === "unlisted") {
    return { pin, refusal: `${title} no longer lists the tool ${tool}, ${notCalled}` };
  }
  if (listed === "unknown") {
    return {
      pin,
      refusal: `${title} has not listed its tools since Vestibule started, so the definition of ` +
        `${tool} cannot be checked and the call was not made`,
    };
  }
  const pinned = entry?.value.hash;
  if (action.definitionSha256 !== undefined && pinned !== action.definitionSha256) {
    return {
      pin,
      refusal: `The definition of the tool ${tool} of ${title} is no longer the one the call ` +
        `was requested under (an owner approved another since), ${notCalled}; the agent may ` +
        `ask again under the definition it is served now`,
    };
  }
  if (listed.hash !== pinned) {
    return {
      pin,
      refusal: `${title} changed the definition of the tool ${tool} since an owner approved ` +
        `it; the change waits for an owner's approval, ${notCalled}. Once the change is ` +
        `approved, the agent may ask again`,
    };
  }
  return { pin, refusal: null };
}

/** An approved call refused just before it was made: what changed since the decision. */
function _refused(action: CallAction, reason: string): AfterApproval {
  return {
    outcome: `Approved, but not applied: ${reason}`,
    ended: "refused",
    result: null,
    event: {
      type: "upstream.call_refused",
      data: {
        upstream: action.upstream,
        tool: action.tool,
        argumentsSha256: action.argumentsSha256,
        reason,
      },
    },
  };
}
