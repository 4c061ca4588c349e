import * as v from "valibot";
import type { OnboardingCaller } from "./caller.ts";
import { defineTool, READ } from "../mcp/tool.ts";
import { DEFAULT_SCOPES, isScope, type Scope, type ScopeCatalogue } from "../oauth/scopes.ts";

/**
 * Scopes whose tools only prepare something a human then decides (DESIGN.md: money, access
 * changes, skill installation and runtime approvals are human decisions).
 */
export const PREPARES_HUMAN_DECISION: ReadonlySet<Scope> = new Set<Scope>([
  "workflows.run",
  "connections.manage",
  "skills.draft",
  "connections.helpdesk.request",
  "connections.mailbox.request",
  "automation.request",
  "members.request",
  "triggers.manage",
  "effects.request",
  "billing.manage",
]);

const OutputSchema = v.object({
  initialScope: v.string(),
  scopes: v.array(v.object({
    name: v.string(),
    meaning: v.string(),
    preparesHumanDecision: v.boolean(),
    ownerOnly: v.boolean(),
  })),
});
type Output = v.InferOutput<typeof OutputSchema>;

/** The same answer for every caller: the service's catalogue, the upstreams' scopes last. */
function _output(catalogue: ScopeCatalogue): Output {
  return {
    initialScope: DEFAULT_SCOPES.join(" "),
    scopes: catalogue.supported.map((name) => ({
      name,
      meaning: catalogue.meaning(name),
      preparesHumanDecision: isScope(name) && PREPARES_HUMAN_DECISION.has(name),
      ownerOnly: catalogue.ownerOnly(name),
    })),
  };
}

function _text(output: Output): string {
  return [
    `Start with ${output.initialScope}; ask for another scope only for an operation the human authorized.`,
    "",
    ...output.scopes.map((s) =>
      `- ${s.name}: ${s.meaning}${s.preparesHumanDecision ? " (prepares a human decision)" : ""}${
        s.ownerOnly ? " (only an owner can grant it)" : ""
      }`
    ),
  ].join("\n");
}

export function listScopesTool(catalogue: ScopeCatalogue) {
  const output = _output(catalogue);
  const text = _text(output);
  return defineTool<OnboardingCaller, Record<string, never>, Output>({
    name: "list_scopes",
    title: "List the workspace scopes",
    description:
      "Every OAuth scope of the workspace with its meaning, whether its tools only prepare a decision a human confirms, and whether only a business owner can grant it.",
    input: v.strictObject({}),
    output: OutputSchema,
    annotations: READ,
    handler: () => Promise.resolve(output),
    text: () => text,
  });
}
