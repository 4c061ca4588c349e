/**
 * Which approved actions Vestibule only records, leaving the work to the business's own systems
 * (told by an event to VESTIBULE_WEBHOOK_URL, docs/integrating.md "Events"). Without an event
 * receiver nothing carries them out, and the approval page, get_approval and start-up say so
 * rather than leave a run `queued` for ever.
 */
import type { GateAction } from "./gate_actions.ts";

/** What waits, and for whom, when no system is told. */
interface _Handoff<T extends GateAction["type"]> {
  /** What the approval leaves behind, e.g. "The run stays queued". */
  readonly waits: string;
  /** What nothing will do, e.g. "nothing will run it". */
  readonly undone: string;
  /** For start-up: the action as the owner knows it. */
  readonly named: string;
  /** Only some requests of the type hand work over; all of them when absent. */
  readonly when?: (action: Extract<GateAction, { type: T }>) => boolean;
}

/**
 * Every action type, held to the union by the compiler: null where Vestibule does the whole
 * change itself (its own records, which the tools read back, or an upstream call it makes).
 */
const HANDOFFS: { readonly [T in GateAction["type"]]: _Handoff<T> | null } = {
  // The run is a record in `queued`; the receiver runs it and reports through the operator API.
  start_workflow: {
    waits: "The run stays queued",
    undone: "nothing will run it",
    named: "workflow runs (start_workflow)",
  },
  // A trigger fires on the business's events and starts runs there.
  create_trigger: {
    waits: "The trigger is recorded",
    undone: "nothing will fire it or run its workflow",
    named: "new triggers (create_trigger)",
  },
  // The connection itself lives in the business's systems; Vestibule keeps its record.
  change_connection: {
    waits: "The connection change is recorded",
    undone: "nothing will carry it out in the service",
    named: "connection changes (change_connection)",
  },
  // "applied" and "not_applied" only settle the record; a retry is a write to make again.
  reconcile_effect: {
    waits: "The retry is recorded",
    undone: "nothing will make the write again",
    named: "retries of external writes (reconcile_effect)",
    when: (action) => action.resolution === "retry",
  },
  change_access: null,
  grant_automation: null,
  install_skill: null,
  change_billing: null,
  call_upstream: null,
  approve_tool_definition: null,
  approve_tool_definitions: null,
};

const _UNTIL =
  "no event receiver is configured, so %s until an operator sets VESTIBULE_WEBHOOK_URL";

/**
 * Why an approved (or, once approved, a pending) action will wait, in plain words; null when
 * it needs no system of the business, when a receiver is configured, or when the gate was
 * declined or its change no longer applied.
 */
export function waitingNotice(
  gate: {
    readonly action: GateAction;
    readonly status: "pending" | "approved" | "declined" | "withdrawn";
    readonly applied: boolean;
  },
  eventReceiver: boolean,
): string | null {
  if (eventReceiver || gate.status === "declined" || gate.status === "withdrawn") return null;
  if (gate.status === "approved" && !gate.applied) return null;
  const handoff = HANDOFFS[gate.action.type] as _Handoff<typeof gate.action.type> | null;
  if (handoff === null || handoff.when?.(gate.action) === false) return null;
  const until = _UNTIL.replace("%s", handoff.undone);
  return gate.status === "pending"
    ? `Once approved, this will wait: ${until}.`
    : `${handoff.waits}: ${until}.`;
}

/** The start-up warning without an event receiver: which approved actions would wait. */
export function waitingActionsWarning(): string {
  const named = Object.values(HANDOFFS).flatMap((handoff) => handoff ? [handoff.named] : []);
  return `no event receiver is configured (VESTIBULE_WEBHOOK_URL): approved ${
    named.join(", ")
  } are recorded but wait, since the business's systems carry them out`;
}
