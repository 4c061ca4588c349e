/**
 * The workspace catalogue in listing order: the connection test first (what a newly
 * connected agent does), then reads, direct writes and gated writes. With
 * VESTIBULE_WORKSPACE_TOOLS=gateway, only the tools every agent needs beside the upstreams'.
 */
import type { WorkspaceToolChoice } from "../../config/config.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { connectionTestTools } from "./agent_connection.ts";
import { gatedTools } from "./gated.ts";
import { readTools } from "./reads.ts";
import type { OwnWorkspaceTool } from "./scoped_tool.ts";
import { writeTools } from "./writes.ts";

/**
 * The own tools a gateway-only workspace keeps (docs/workspace.md lists them; a test compares):
 * the connection test the contract names, the business the token is for, and the approvals of
 * gated upstream calls and upstream changes.
 */
export const GATEWAY_WORKSPACE_TOOLS: ReadonlySet<string> = new Set([
  "get_agent_connection_setup",
  "verify_agent_connection",
  "get_business",
  "get_approval",
  "redeliver_decision",
]);

export function createWorkspaceTools(
  services: WorkspaceServices,
  choice: WorkspaceToolChoice = "all",
): OwnWorkspaceTool[] {
  const tools = [
    ...connectionTestTools(services),
    ...readTools(services),
    ...writeTools(services),
    ...gatedTools(services),
  ];
  return choice === "all" ? tools : tools.filter((tool) => GATEWAY_WORKSPACE_TOOLS.has(tool.name));
}
