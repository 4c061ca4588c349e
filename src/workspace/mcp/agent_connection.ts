/**
 * The agent connection test (spec §2): `get_agent_connection_setup` creates or restarts the
 * attempt for this business and client, and `nextAction` tells the client what to call next;
 * `verify_agent_connection` verifies that exact attempt. Neither starts anything that costs.
 */
import * as v from "valibot";
import { ToolError } from "../../mcp/tool.ts";
import type { Attempt } from "../domain/connection_tests.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { auditCall, IdInput, scopedTool } from "./scoped_tool.ts";

export const NextActionSchema = v.variant("type", [
  v.object({
    type: v.literal("call_tool"),
    tool: v.literal("verify_agent_connection"),
    arguments: v.object({ attemptId: v.string() }),
  }),
  v.object({ type: v.literal("done") }),
]);
export type NextAction = v.InferOutput<typeof NextActionSchema>;

const SetupOutputSchema = v.object({
  attemptId: v.string(),
  status: v.picklist(["pending", "verified"]),
  businessId: v.string(),
  businessName: v.string(),
  clientId: v.string(),
  expiresAt: v.number(),
  verifiedAt: v.nullable(v.number()),
  steps: v.array(v.string()),
  nextAction: NextActionSchema,
});

const VerifyOutputSchema = v.object({
  attemptId: v.string(),
  status: v.literal("verified"),
  verifiedAt: v.number(),
  nextAction: v.object({ type: v.literal("done") }),
});

function _nextAction(attempt: Attempt): NextAction {
  return attempt.status === "verified" ? { type: "done" } : {
    type: "call_tool",
    tool: "verify_agent_connection",
    arguments: { attemptId: attempt.id },
  };
}

export function connectionTestTools(services: WorkspaceServices) {
  const { connectionTests, accounts } = services;
  return [
    scopedTool({
      name: "get_agent_connection_setup",
      title: "Start the agent connection test",
      description:
        "Creates or restarts the connection test for this business and client and returns the attempt, its steps and nextAction, the call to make next. A verified attempt is returned as is unless restart is true. Starts no workflow and spends nothing.",
      scope: "app.access",
      input: v.strictObject({
        restart: v.optional(
          v.pipe(v.boolean(), v.description("Start a new attempt even when one is verified.")),
          false,
        ),
      }),
      output: SetupOutputSchema,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      async handler(args, { auth }) {
        const { attempt, created } = await connectionTests.start(auth, args.restart);
        if (created) {
          await auditCall(
            services,
            auth,
            "get_agent_connection_setup",
            "Started a connection test",
          );
        }
        const business = await accounts.getBusiness(auth.businessId);
        return {
          attemptId: attempt.id,
          status: attempt.status,
          businessId: auth.businessId,
          businessName: business?.name ?? "",
          clientId: auth.clientId,
          expiresAt: attempt.expiresAt,
          verifiedAt: attempt.verifiedAt,
          steps: [
            "1. Done: this client reached the workspace MCP endpoint with a valid access token for this business.",
            `2. ${
              attempt.status === "verified" ? "Done" : "Next"
            }: call verify_agent_connection with attemptId ${attempt.id} before it expires.`,
            "3. Then tell the human the connection is verified; it shows on their account page.",
          ],
          nextAction: _nextAction(attempt),
        };
      },
    }),
    scopedTool({
      name: "verify_agent_connection",
      title: "Verify the agent connection test",
      description:
        "Verifies the exact attempt that get_agent_connection_setup returned. It must belong to this business and client and be neither expired nor superseded.",
      scope: "app.access",
      input: v.strictObject({
        attemptId: IdInput("The attemptId that get_agent_connection_setup returned."),
      }),
      output: VerifyOutputSchema,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      async handler(args, { auth }) {
        const outcome = await connectionTests.verify(auth, args.attemptId);
        if (!outcome.ok) throw new ToolError(outcome.reason);
        await auditCall(
          services,
          auth,
          "verify_agent_connection",
          `Verified connection test ${args.attemptId}`,
        );
        return {
          attemptId: outcome.attempt.id,
          status: "verified" as const,
          verifiedAt: outcome.attempt.verifiedAt ?? services.now(),
          nextAction: { type: "done" as const },
        };
      },
    }),
  ];
}
