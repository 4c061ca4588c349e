/**
 * Approved upstream calls (the gates' side of the gateway: workspace/domain/gate_actions.ts
 * `UpstreamCalls`), and what every upstream call shares: who is asking, told to upstreams whose
 * file entry says so, and the audit line.
 */
import type {
  AfterApproval,
  ApprovedGate,
  UpstreamCalls,
} from "../workspace/domain/gate_actions.ts";
import type { CallRecord, UpstreamCallOptions, UpstreamSet } from "./upstream_set.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";

/** Who is asking, in a call's `_meta`, for upstreams whose file entry says forwardIdentity. */
const CALLER_META_KEY = "vestibule/caller";

export function serves(upstream: UpstreamConfig, businessId: string): boolean {
  return upstream.businesses === null || upstream.businesses.includes(businessId);
}

export function createUpstreamCalls(
  upstreams: UpstreamSet,
  tracing: Tracing = NO_TRACING,
): UpstreamCalls {
  return {
    title(upstream, businessId) {
      const live = upstreams.get(upstream);
      return live && serves(live.config, businessId) ? live.config.title : null;
    },
    listed(upstream, tool) {
      const live = upstreams.get(upstream);
      if (live === undefined) return "unlisted";
      if (live.config.hidden.has(tool)) return "hidden";
      if (live.tools === null) return "unknown";
      const listed = live.tools.get(tool);
      return listed === undefined ? "unlisted" : { hash: listed.hash };
    },
    gated: (upstream, tool) => upstreams.get(upstream)?.config.gated.has(tool) ?? false,
    async callApproved(gate: ApprovedGate, action): Promise<AfterApproval> {
      const live = upstreams.get(action.upstream)!;
      const caller = {
        businessId: gate.businessId,
        accountId: gate.requestedBy,
        clientId: gate.clientId,
      };
      // Made minutes after the agent asked, in the owner's request: linked to the asking trace.
      const record = await tracing.span(`gate ${gate.tool}`, {
        kind: "internal",
        attributes: { "vestibule.gate.id": gate.id, "vestibule.upstream.name": action.upstream },
        links: action.trace === undefined ? [] : [{ traceparent: action.trace }],
      }, () => live.call(action.tool, action.arguments, identity(live.config, caller)));
      // The approval shows the arguments (and their SHA-256, once): its outcome needs neither.
      const summary = callSummary(live.config, action.tool, record, null);
      return {
        outcome: record.outcome === "ok" ? summary : _failed(live.config, summary, record),
        ended: record.outcome === "ok" ? "done" : "failed",
        result: record.result,
        event: {
          type: "upstream.call_completed",
          data: {
            upstream: action.upstream,
            tool: action.tool,
            argumentsSha256: action.argumentsSha256,
            outcome: record.outcome,
            durationMs: record.durationMs,
          },
        },
      };
    },
  };
}

/**
 * Who is calling: the person (whose own sign-in a per-person upstream uses), and in `_meta`
 * non-secret ids only, when the upstream's entry asks for them.
 */
export function identity(
  upstream: UpstreamConfig,
  caller: { readonly businessId: string; readonly accountId: string; readonly clientId: string },
): Pick<UpstreamCallOptions, "meta" | "caller"> {
  const { businessId, accountId, clientId } = caller;
  const person = { caller: { businessId, accountId } };
  if (!upstream.forwardIdentity) return person;
  return { ...person, meta: { [CALLER_META_KEY]: { businessId, accountId, clientId } } };
}

const OUTCOME_WORDS: Readonly<Record<CallRecord["outcome"], string>> = {
  ok: "answered",
  tool_error: "answered with a tool error",
  unreachable: "could not be reached",
  timeout: "did not answer in time",
  protocol: "answered something that is not MCP",
  too_large: "answered too much",
  cancelled: "was cancelled by the agent",
  ended: "was ended by Vestibule, not the agent (shutting down, or a deadline of its own)",
  unauthorized: "refused the sign-in",
  insufficient_scope: "refused: the sign-in lacks a permission the call needs",
  not_connected: "was not called: the person's own sign-in is missing or must be renewed",
};

/** Outcomes after which the upstream may have acted although the call did not succeed. */
const MAY_HAVE_ACTED: ReadonlySet<CallRecord["outcome"]> = new Set([
  "unreachable",
  "timeout",
  "protocol",
  "too_large",
  "cancelled",
  "ended",
]);

/**
 * A failed approved call in words: what happened, and what comes next. It is never made again
 * (the approval is used up): the agent may ask again, which is a new approval.
 */
function _failed(upstream: UpstreamConfig, summary: string, record: CallRecord): string {
  const unsure = MAY_HAVE_ACTED.has(record.outcome)
    ? ` ${upstream.title} may have acted on it all the same: check there before asking again.`
    : "";
  return `The call failed. ${summary}.${unsure} This approval is used up and the call is not ` +
    `made again; the agent may call the tool again, which asks for a new approval`;
}

/**
 * One audit line: the tool, how it ended, how long, and the arguments' SHA-256 (never them),
 * unless null (an approved call's, whose approval shows them).
 */
export function callSummary(
  upstream: UpstreamConfig,
  tool: string,
  record: CallRecord,
  argumentsSha256: string | null,
): string {
  return `Called ${tool} of ${upstream.title}: ${
    OUTCOME_WORDS[record.outcome]
  } (${record.outcome}) in ${record.durationMs} ms` +
    (argumentsSha256 === null ? "" : `; arguments SHA-256 ${argumentsSha256}`);
}
