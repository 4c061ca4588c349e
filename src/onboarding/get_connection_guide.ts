import * as v from "valibot";
import type { OnboardingCaller } from "./caller.ts";
import { defineTool, READ } from "../mcp/tool.ts";
import {
  type ConnectionGuide,
  ConnectionGuideSchema,
  renderGuideText,
} from "./connection_guide.ts";
import { checkDiscovery, DISCOVERY_STEPS, DiscoveryCheckSchema } from "./discovery_check.ts";

const InputSchema = v.strictObject({
  checkDiscovery: v.optional(
    v.pipe(
      v.boolean(),
      v.description(
        "Also check, from the server, that each discovery document answers and agrees with the guide (reports progress).",
      ),
    ),
  ),
});

const OutputSchema = v.object({
  ...ConnectionGuideSchema.entries,
  discovery: v.optional(DiscoveryCheckSchema),
});

/** The exact steps to reach the workspace MCP; optionally a live check of the discovery chain. */
export function getConnectionGuideTool(guide: ConnectionGuide, fetcher: typeof fetch) {
  const text = renderGuideText(guide);
  return defineTool<
    OnboardingCaller,
    v.InferOutput<typeof InputSchema>,
    v.InferOutput<typeof OutputSchema>
  >({
    name: "get_connection_guide",
    title: "Get the workspace connection guide",
    description:
      "The exact steps an agent follows to reach the OAuth-protected workspace MCP: its URL, the discovery documents, the scope to start with (app.access), the human sign-in and consent, and the next action. Grants no access.",
    input: InputSchema,
    output: OutputSchema,
    annotations: READ,
    reportsProgress: true,
    async handler(args, context) {
      if (!args.checkDiscovery) return guide;
      const discovery = await checkDiscovery(
        guide,
        fetcher,
        (done, message) => context.progress(done, DISCOVERY_STEPS, message),
      );
      return { ...guide, discovery };
    },
    text: (output) =>
      output.discovery === undefined
        ? text
        : `${text}\n## Discovery check\n\n${
          output.discovery.checks.map((c) => `- ${c.name} (${c.url}): ${c.detail}`).join("\n")
        }\n`,
  });
}
