/**
 * Operator-editable files in static/: read once at start-up and filled with the configured
 * origins. A file that cannot be read or parsed stops start-up with a TemplateError that
 * names the file (and, for page documents, the JSON path).
 */
import type { Config } from "../config/config.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";
import { publisherNamespace } from "../mcp/servers.ts";

/** The directory the templates live in; `deno compile --include static` embeds it. */
export const STATIC_DIR = new URL("../../static/", import.meta.url);

export class TemplateError extends StartupError {
  override name = "TemplateError";

  override get line(): string {
    return `template error: ${this.message}`;
  }
  readonly file: string;
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.file = file;
  }
}

type Origins = Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;

/**
 * Replaces `{base_url}`, `{auth_url}` and `{api_url}` (origins carry no trailing slash), and
 * `{mcp_namespace}`, the first half of both MCP servers' names (mcp/servers.ts).
 */
export function fillPlaceholders(text: string, origins: Origins): string {
  return text
    .replaceAll("{base_url}", origins.baseUrl)
    .replaceAll("{auth_url}", origins.authUrl)
    .replaceAll("{api_url}", origins.apiUrl)
    .replaceAll("{mcp_namespace}", publisherNamespace(origins.baseUrl));
}

/** Reads `static/<name>` and fills its placeholders. */
export async function readTemplate(
  staticDir: URL,
  name: string,
  origins: Origins,
): Promise<string> {
  let text: string;
  try {
    text = await runtime.readTextFile(new URL(name, staticDir));
  } catch (error) {
    throw new TemplateError(`static/${name}`, `cannot read (${(error as Error).message})`);
  }
  return fillPlaceholders(text, origins);
}
