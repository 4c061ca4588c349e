/**
 * The workspace catalogue in listing order: the connection test first (what a newly
 * connected agent does), then reads, direct writes and gated writes.
 */
import type { WorkspaceServices } from "../domain/services.ts";
import { connectionTestTools } from "./agent_connection.ts";
import { gatedTools } from "./gated.ts";
import { readTools } from "./reads.ts";
import type { OwnWorkspaceTool } from "./scoped_tool.ts";
import { writeTools } from "./writes.ts";

export function createWorkspaceTools(services: WorkspaceServices): OwnWorkspaceTool[] {
  return [
    ...connectionTestTools(services),
    ...readTools(services),
    ...writeTools(services),
    ...gatedTools(services),
  ];
}
