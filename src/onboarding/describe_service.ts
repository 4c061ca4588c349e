import * as v from "valibot";
import type { Config } from "../config/config.ts";

type Origins = Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;
import type { OnboardingCaller } from "./caller.ts";
import { defineTool, READ } from "../mcp/tool.ts";

const OutputSchema = v.object({
  name: v.string(),
  summary: v.string(),
  publicDocuments: v.array(v.object({
    title: v.string(),
    url: v.string(),
    mediaType: v.string(),
    description: v.string(),
  })),
  endpoints: v.object({ onboardingMcp: v.string(), workspaceMcp: v.string() }),
  offered: v.array(v.string()),
  notOffered: v.array(v.string()),
  humanDecisions: v.array(v.string()),
});
type Output = v.InferOutput<typeof OutputSchema>;

/** Spec §1 and §4, in the configured origins. */
function _describe(config: Origins): Output {
  const { baseUrl, authUrl, apiUrl } = config;
  const doc = (title: string, url: string, mediaType: string, description: string) => ({
    title,
    url,
    mediaType,
    description,
  });
  return {
    name: "Vestibule",
    summary:
      "One front door for AI agents to a business workspace: free public read-only documents, an OAuth authorization server with human sign-in and consent, a public onboarding MCP endpoint (this one) and an OAuth-protected workspace MCP endpoint whose business operations are MCP tools.",
    publicDocuments: [
      doc("Health", `${baseUrl}/health`, "application/json", "Only that the website responds."),
      doc(
        "Agent instructions",
        `${baseUrl}/llms.txt`,
        "text/plain",
        "Product guidance for agents.",
      ),
      doc(
        "Product overview",
        `${baseUrl}/index.json`,
        "application/json",
        "PageDocument, version 1.",
      ),
      doc(
        "Developer reference",
        `${baseUrl}/developers.json`,
        "application/json",
        "PageDocument, version 1; also as HTML and markdown.",
      ),
      doc(
        "Interface description",
        `${baseUrl}/openapi.json`,
        "application/json",
        "OpenAPI 3.1 description of the public reads and MCP tool discovery.",
      ),
      doc(
        "Connection guide",
        `${authUrl}/llms.txt`,
        "text/plain",
        "The agent connection guide; also at /agents as HTML.",
      ),
      doc(
        "Protected-resource metadata",
        `${apiUrl}/.well-known/oauth-protected-resource`,
        "application/json",
        "RFC 9728: resource, authorization servers, supported scopes.",
      ),
      doc(
        "Authorization-server metadata",
        `${authUrl}/.well-known/oauth-authorization-server/api/auth`,
        "application/json",
        "RFC 8414: authorization, token and registration endpoints.",
      ),
    ],
    endpoints: { onboardingMcp: `${authUrl}/mcp`, workspaceMcp: `${apiUrl}/api/mcp` },
    offered: [
      "Free, unauthenticated public reads of the documents above.",
      "Setup guidance on this onboarding endpoint, which needs no credentials and no session.",
      "Workspace tools over MCP with an OAuth access token issued after a human signs in, selects a business and consents to exact scopes.",
      "Free installation of the e-commerce platform connector.",
    ],
    notOffered: [
      "A public hosted merchant sandbox: public discovery is not a simulated sandbox.",
      "Self-serve API keys or personal API keys.",
      "A general free usage tier; metered usage needs a separately approved plan on the platform.",
      "Business access from this onboarding endpoint, from a cookie or from an account alone.",
    ],
    humanDecisions: [
      "Money: starting paid workflows and changing billing.",
      "Access changes.",
      "Installation of agent skills.",
      "Runtime approvals. Signing in does not enable charges.",
    ],
  };
}

export function describeServiceTool(config: Origins) {
  const output = _describe(config);
  return defineTool<OnboardingCaller, Record<string, never>, Output>({
    name: "describe_service",
    title: "Describe the service",
    description:
      "What Vestibule is, its public documents and endpoints, what is and is not offered, and which decisions stay with humans.",
    input: v.strictObject({}),
    output: OutputSchema,
    annotations: READ,
    handler: () => Promise.resolve(output),
  });
}
