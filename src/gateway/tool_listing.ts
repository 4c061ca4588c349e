// An upstream's tool list: every page of tools/list walked, with limits against a server that
// pages forever, and each definition checked; an unusable one is left out and logged, so one
// bad tool does not cost the others (as 2026-07-28 asks of invalid `x-mcp-header` tools).
import * as v from "valibot";
import { logEvent, type LogSink } from "../http/request_log.ts";
import { describeIssues } from "../issue_words.ts";
import { JsonObjectSchema, ObjectJsonSchemaSchema } from "../mcp/messages.ts";
import { UpstreamError, type UpstreamTool } from "./mcp_client.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";

const LIST_LIMITS = { pages: 100, tools: 10_000 } as const;

const UpstreamToolSchema = v.looseObject({
  name: v.pipe(v.string(), v.minLength(1)),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  inputSchema: ObjectJsonSchemaSchema,
  outputSchema: v.optional(ObjectJsonSchemaSchema),
  annotations: v.optional(JsonObjectSchema),
  _meta: v.optional(JsonObjectSchema),
});

const PageSchema = v.looseObject({
  tools: v.array(v.unknown()),
  nextCursor: v.optional(v.string()),
});

/** Every tool of every page; `page` fetches one tools/list result for a cursor. */
export async function listAllTools(
  upstream: UpstreamConfig,
  log: LogSink,
  page: (cursor: string | undefined) => Promise<Record<string, unknown>>,
): Promise<UpstreamTool[]> {
  const tools: UpstreamTool[] = [];
  const names = new Set<string>();
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1;; pages++) {
    const parsed = v.safeParse(PageSchema, await page(cursor));
    if (!parsed.success) {
      throw new UpstreamError(
        "protocol",
        `${upstream.title} answered tools/list with an unusable page: ${
          describeIssues(parsed.issues)
        }`,
      );
    }
    for (const raw of parsed.output.tools) {
      const tool = _checked(upstream, log, raw);
      if (tool === null) continue;
      // Names are what calls address: a second definition under one would replace the first.
      if (names.has(tool.name)) {
        logEvent(log, {
          level: "warn",
          message: "upstream lists a tool name twice: the second is left out",
          upstream: upstream.name,
          tool: tool.name.slice(0, 200),
        });
        continue;
      }
      names.add(tool.name);
      tools.push(tool);
    }
    cursor = parsed.output.nextCursor;
    if (cursor === undefined) return tools;
    if (seen.has(cursor)) {
      throw new UpstreamError(
        "protocol",
        `${upstream.title} repeated a tools/list cursor; its pages go round in a circle`,
      );
    }
    seen.add(cursor);
    if (pages >= LIST_LIMITS.pages || tools.length >= LIST_LIMITS.tools) {
      throw new UpstreamError(
        "protocol",
        `${upstream.title} lists more than ${LIST_LIMITS.pages} pages or ` +
          `${LIST_LIMITS.tools} tools, more than the gateway takes`,
      );
    }
  }
}

function _checked(upstream: UpstreamConfig, log: LogSink, raw: unknown): UpstreamTool | null {
  const parsed = v.safeParse(UpstreamToolSchema, raw);
  if (parsed.success) return parsed.output as UpstreamTool;
  const name = (raw as { name?: unknown } | null)?.name;
  logEvent(log, {
    level: "warn",
    message: "upstream tool left out",
    upstream: upstream.name,
    tool: typeof name === "string" ? name : null,
    problem: describeIssues(parsed.issues),
  });
  return null;
}
