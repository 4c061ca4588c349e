/**
 * How a gate reads to a person where many are side by side (the approvals list, mail subjects,
 * the audit log): its headline, with the decisive arguments of an upstream call, and an upstream
 * change said as the upstream's. Plain text: pages escape it, and no line break reaches a subject.
 */
import { countOf } from "../../count_words.ts";
import type { ActionOf } from "./gate_actions.ts";
import type { Gate } from "./gate_record.ts";

/** The arguments a headline shows, and how long each value and the whole summary may grow. */
const SHOWN_ARGUMENTS = 3;
const VALUE_CHARS = 40;
const SUMMARY_CHARS = 120;

/**
 * The first few arguments as written, `order 1042, amount 120.00, currency USD`: a name and its
 * value (a string without quotes, anything else as JSON), each cut short, with "…" for the rest.
 */
export function argumentsSummary(args: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(args);
  const parts = names.slice(0, SHOWN_ARGUMENTS).map((name) =>
    `${_short(name, VALUE_CHARS)} ${_short(_written(args[name]), VALUE_CHARS)}`
  );
  if (names.length > SHOWN_ARGUMENTS) parts.push("…");
  return _short(parts.join(", "), SUMMARY_CHARS);
}

/**
 * The gate in one line: an upstream call is its tool and arguments (`refund_customer — order
 * 1042, amount 120.00`), an upstream change the upstream's (`Acme billing changed the tool
 * quote`), anything else its summary. `title` is the upstream's, or null when it has none.
 */
export function gateHeadline(gate: Gate, title: string | null): string {
  const { action } = gate;
  if (action.type === "call_upstream") {
    const args = argumentsSummary(action.arguments);
    return _oneLine(args === "" ? action.tool : `${action.tool} — ${args}`);
  }
  if (action.type === "approve_tool_definitions") {
    return _oneLine(`${title ?? action.upstream} ${changeWords(action)}`);
  }
  if (action.type === "approve_tool_definition") {
    const verb = action.change === "new" ? "added" : "changed";
    return _oneLine(`${title ?? action.upstream} ${verb} the tool ${action.tool}`);
  }
  return _oneLine(gate.summary);
}

/** What an upstream change did: `changed the tool quote`, `changed or added 3 tools`. */
export function changeWords(action: ActionOf<"approve_tool_definitions">): string {
  const total = action.changed + action.new;
  if (total === 1 && action.tool !== undefined) {
    return `${action.changed === 1 ? "changed" : "added"} the tool ${action.tool}`;
  }
  const verb = action.new === 0 ? "changed" : action.changed === 0 ? "added" : "changed or added";
  return `${verb} ${countOf(total, "tool")}`;
}

/** Whether the gate is an upstream's change, which no agent asked for. */
export function isUpstreamChange(gate: Gate): boolean {
  return gate.action.type === "approve_tool_definitions" ||
    gate.action.type === "approve_tool_definition";
}

/**
 * Who asked, as a list row says it: the person and the agent, or for an upstream change the
 * upstream (whose listing an agent only met).
 */
export function askedByWords(gate: Gate, email: string, title: string | null): string {
  return isUpstreamChange(gate)
    ? `changed by ${title ?? "an upstream"}, not asked by an agent`
    : `asked by ${email} through ${gate.clientName}`;
}

/**
 * The decision's audit line: the owner approved or declined, naming what (the headline), and
 * what came of an approval that was not applied.
 */
export function decisionWords(decided: Gate, title: string | null): string {
  const what = gateHeadline(decided, title);
  if (decided.status === "declined") return `Owner declined: ${what}`;
  if (decided.status === "withdrawn") return `Agent withdrew: ${what}`;
  const approved = `Owner approved: ${what}`;
  return decided.applied ? approved : `${approved}; ${decided.outcome ?? "not applied"}`;
}

/** A value as written: a string as it is, anything else as JSON. */
function _written(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
}

/** Any run of white space or control characters as one space (no line ends in a subject). */
function _oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
}

function _short(text: string, max: number): string {
  const line = _oneLine(text);
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}
