/**
 * What calling one upstream tool in the workspace does, and the definition it is listed in
 * (upstream_tools.ts lists the caller's). A held tool's call is refused with the link to the
 * change's approval. A gated call is a gate bound to the caller, the tool and the arguments;
 * approved, it is made once. A direct call goes through the upstream's own rate limit (per
 * account and client), reaches the upstream with none of the agent's credentials, and is one
 * audit entry: who, which agent, which tool, the SHA-256 of the canonical arguments, how it
 * ended and how long it took; made as a task, of a tool its upstream may run as one, it is
 * relayed as the upstream's task (relayed_tasks.ts).
 */
import type { Tracing } from "../tracing/tracing.ts";
import { createRateLimiter, type RateLimiter, UNLIMITED } from "../http/rate_limiter.ts";
import type { ToolDescription } from "../mcp/messages.ts";
import { ToolError } from "../mcp/tool.ts";
import { UrlElicitationRequired } from "../mcp/elicitation.ts";
import type { GateAction } from "../workspace/domain/gate_actions.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";
import {
  pendingApproval,
  SCOPE_META_KEY,
  type UpstreamWorkspaceTool,
} from "../workspace/mcp/scoped_tool.ts";
import { canonicalSha256 } from "../canonical_json.ts";
import type { UpstreamTool } from "./mcp_client.ts";
import { callSummary, identity } from "./upstream_calls.ts";
import type { CallAudit } from "./call_audit.ts";
import type { LiveUpstream } from "./upstream_set.ts";
import type { RelayedTasks } from "./relayed_tasks.ts";
import type { ViewEntry } from "./upstream_views.ts";
import { servedToolName, type UpstreamConfig } from "../config/upstreams.ts";
import { countOf } from "../count_words.ts";

/** How long an owner has to approve a gated upstream call; later, it is not made. */
const GATED_CALL_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** The key of an upstream's name in its tools' `_meta`. */
const UPSTREAM_META_KEY = "vestibule/upstream";

export interface UpstreamToolCallsDeps {
  readonly services: WorkspaceServices;
  /** Whether the upstreams' rate limits apply (VESTIBULE_RATE_LIMITS=off: benchmarks only). */
  readonly rateLimited: boolean;
  /** Where direct calls' entries go, committed behind their answers. */
  readonly audit: CallAudit;
  /** Where calls made as tasks are relayed. */
  readonly relayed: RelayedTasks;
  readonly now: () => number;
  /** A gated call's request keeps its trace context, for the approved call's link. */
  readonly tracing: Tracing;
}

/** The workspace tool of one upstream tool as a business's view lists it. */
export function createUpstreamToolCalls(
  deps: UpstreamToolCallsDeps,
): (live: LiveUpstream, entry: ViewEntry) => UpstreamWorkspaceTool {
  const { services, audit, relayed, now, tracing } = deps;
  // Each upstream's own limit, per account and client; a reload that changes an upstream starts
  // its limit afresh.
  const limiters = new WeakMap<UpstreamConfig, RateLimiter>();
  const limiterOf = (upstream: UpstreamConfig) => {
    let limiter = limiters.get(upstream);
    if (limiter === undefined) {
      limiter = deps.rateLimited ? createRateLimiter({ ...upstream.rateLimit, now }) : UNLIMITED;
      limiters.set(upstream, limiter);
    }
    return limiter;
  };

  const scopeOf = (upstream: UpstreamConfig, tool: string) =>
    upstream.toolScopes.get(tool) ?? `upstream.${upstream.name}`;

  const toolOf = (live: LiveUpstream, entry: ViewEntry): UpstreamWorkspaceTool => {
    const upstream = live.config;
    const name = servedToolName(upstream.name, entry.tool);
    const scope = scopeOf(upstream, entry.tool);
    const gated = upstream.gated.has(entry.tool);
    const limiter = limiterOf(upstream);
    // Tasks are relayed where the upstream may run the tool as one and its session is shared.
    const support = entry.definition["execution"] as { taskSupport?: unknown } | undefined;
    const relays = !gated && live.taskRequest !== undefined &&
      (support?.taskSupport === "optional" || support?.taskSupport === "required");
    const definition = _served(entry.definition, name, scope, upstream, gated, relays);
    const base = { name, definition, scope };
    if (entry.heldBy !== null) {
      const heldBy = entry.heldBy;
      return {
        ...base,
        async forward() {
          // A decided gate is no way out: the change was declined (or left out of an approval).
          const gate = heldBy === "" ? null : await services.gates.get(heldBy);
          if (gate !== null && gate.status !== "pending") {
            throw new ToolError(
              `The tool ${entry.tool} of ${upstream.title} is unavailable: ${upstream.title} changed it and an owner did not approve the change. It can be called again once ${upstream.title} serves it as approved before, or an owner approves a later change`,
            );
          }
          const link = gate === null
            ? services.gates.approvalsUrl
            : services.gates.approvalUrl(gate.id);
          throw new ToolError(
            `${upstream.title} changed the tool ${entry.tool} since an owner approved it; it cannot be called until an owner approves the change at ${link}`,
          );
        },
      };
    }
    if (gated) {
      return {
        ...base,
        async forward(args, { auth }) {
          const trace = tracing.carrier();
          const action: Extract<GateAction, { type: "call_upstream" }> = {
            type: "call_upstream",
            upstream: upstream.name,
            tool: entry.tool,
            arguments: { ...args },
            argumentsSha256: canonicalSha256(args),
            expiresAt: now() + GATED_CALL_LIFETIME_MS,
            // The pinned definition served (not held): only under it is the call made.
            definitionSha256: entry.hash,
            ...(trace?.traceparent === undefined ? {} : { trace: trace.traceparent }),
          };
          const requested = await services.gates.request({
            businessId: auth.businessId,
            accountId: auth.accountId,
            clientId: auth.clientId,
            clientName: auth.clientName,
            tool: name,
            scope,
            action,
          });
          if (!requested.ok) throw new ToolError(requested.reason);
          const pending = pendingApproval(services.gates.view(requested.gate));
          return {
            content: [{ type: "text", text: JSON.stringify(pending) }],
            structuredContent: pending,
          };
        },
      };
    }
    return {
      ...base,
      async forward(args, { auth, progress, wantsProgress, signal, task }) {
        const decision = limiter.take(`${auth.accountId}:${auth.clientId}`);
        if (!decision.allowed) {
          throw new ToolError(
            `Too many calls of ${upstream.title}'s tools: retry after ${
              countOf(decision.retryAfterSeconds, "second")
            }`,
          );
        }
        const argumentsSha256 = canonicalSha256(args);
        const asTask = relays && task === true;
        const record = await live.call(entry.tool, { ...args }, {
          signal,
          ...(asTask ? { task: true } : {}),
          ...(wantsProgress
            ? { onProgress: (done, total, message) => void progress(done, total, message) }
            : {}),
          ...identity(upstream, auth),
        });
        // Kept before the audit line, which names it (the same store: if one cannot be written,
        // neither can the other).
        const started = asTask ? await relayed.start(auth, live, entry.tool, record.result) : null;
        await audit.record({
          businessId: auth.businessId,
          accountId: auth.accountId,
          actor: "agent",
          clientId: auth.clientId,
          action: name,
          summary: callSummary(upstream, entry.tool, record, argumentsSha256) +
            (started?.taskId ? `; relayed as task ${started.taskId}` : ""),
          gateId: null,
        });
        // The person must connect first: a client that declared URL elicitation is asked in the
        // protocol's words (mcp/elicitation.ts), any other gets this result's text, as always.
        if (record.connect) {
          const [text] = record.result.content as readonly { readonly text: string }[];
          throw new UrlElicitationRequired(text!.text, record.connect.url, record.connect.prompt);
        }
        return started?.answer ?? record.result;
      },
    };
  };

  return toolOf;
}

/**
 * The definition listed in the workspace: the pinned one, renamed with the upstream's prefix,
 * its scope said in the description and `_meta`; a gated tool may answer with a task.
 */
function _served(
  definition: UpstreamTool,
  name: string,
  scope: string,
  upstream: UpstreamConfig,
  gated: boolean,
  relays: boolean,
): ToolDescription {
  const own = definition.description === undefined ? "" : `${definition.description} `;
  const note = gated
    ? `Each call needs an owner's approval: it returns a pending approval (approvalUrl); read the result with get_approval. Requires scope ${scope}.`
    : `Requires scope ${scope}.`;
  // A gated call answers either the pending approval or, through a task, the upstream's own
  // result: no outputSchema fits both, so none is listed. Another tool's execution.taskSupport
  // is passed on only where its tasks are relayed.
  const { execution: _tasks, ...unrelayed } = definition;
  const listed = relays ? definition : unrelayed;
  const { outputSchema: _answer, ...rest } = listed;
  return {
    ...(gated ? rest : listed),
    name,
    description: `${own}${note}`,
    ...(gated ? { execution: { taskSupport: "optional" } } : {}),
    _meta: { ...definition._meta, [SCOPE_META_KEY]: scope, [UPSTREAM_META_KEY]: upstream.name },
  } as ToolDescription;
}
