/**
 * The workspace catalogue in listing order: the connection test first (what a newly
 * connected agent does), then reads, direct writes and gated writes.
 */
import type { AnyTool } from "../../mcp/tool.ts";
import type { WorkspaceAuth } from "../../workspace/bearer.ts";
import type { WorkspaceServices } from "../../workspace/services.ts";
import { connectionTestTools } from "./agent_connection.ts";
import { gatedTools } from "./gated.ts";
import { readTools } from "./reads.ts";
import { writeTools } from "./writes.ts";

export function createWorkspaceTools(services: WorkspaceServices): AnyTool<WorkspaceAuth>[] {
  return [
    ...connectionTestTools(services),
    ...readTools(services),
    ...writeTools(services),
    ...gatedTools(services),
  ];
}
