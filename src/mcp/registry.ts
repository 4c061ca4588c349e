// The catalogue of one endpoint (or, where the tools depend on the caller, of one caller):
// tools/list entries derived once from the tool definitions, cut into pages once, and lookup
// by name for tools/call.
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { createPageCursors } from "./cursor.ts";
import { type ListToolsResult, type ToolDescription, ToolSchema } from "./messages.ts";
import { type AnyTool, isForwarded } from "./tool.ts";

/** `T` is the endpoint's own kind of tool, which its hooks see as such. */
export interface ToolRegistry<A, T extends AnyTool<A> = AnyTool<A>> {
  /** Catalogue order, which is the listing order. */
  readonly tools: readonly T[];
  /** The tools/list entries, in the same order. */
  readonly descriptions: readonly ToolDescription[];
  find(name: string): T | undefined;
  /** Every page, in listing order; each a frozen tools/list result of the 2025 revisions. */
  readonly pages: readonly ToolPage[];
  /** The page a cursor resumes at (none: the first page); undefined if forged or stale. */
  page(cursor: string | undefined): ToolPage | undefined;
}

/** One page of tools/list: the same tools in the same order for every caller and revision. */
export type ToolPage = Readonly<Pick<ListToolsResult, "tools" | "nextCursor">>;

export interface ToolRegistryOptions {
  readonly pageSize: number;
}

/** MCP 2025-11-25 "Tool names": 1-128 of these characters. */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Throws at start-up on a catalogue that no client could use; never at request time. (The
 * tools' type is `T & AnyTool<A>` so that `A` is inferred from them.)
 */
export function createToolRegistry<A, T extends AnyTool<A> = AnyTool<A>>(
  tools: readonly (T & AnyTool<A>)[],
  options: ToolRegistryOptions,
): ToolRegistry<A, T> {
  const byName = new Map<string, T>();
  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) {
      throw new Error(`Tool name ${JSON.stringify(tool.name)} is invalid`);
    }
    if (byName.has(tool.name)) throw new Error(`Tool ${tool.name} is defined twice`);
    byName.set(tool.name, tool);
  }
  const descriptions = tools.map(describeTool);
  const { pageSize } = options;
  const offsets: number[] = [];
  for (let offset = pageSize; offset < tools.length; offset += pageSize) offsets.push(offset);
  const cursors = createPageCursors({ offsets, catalogue: JSON.stringify(descriptions) });
  const pages = new Map<number, ToolPage>();
  for (const offset of [0, ...offsets]) {
    const next = offset + pageSize < tools.length
      ? cursors.cursorFor(offset + pageSize)
      : undefined;
    pages.set(
      offset,
      Object.freeze({
        tools: descriptions.slice(offset, offset + pageSize),
        ...(next === undefined ? {} : { nextCursor: next }),
      }),
    );
  }
  return {
    tools,
    descriptions,
    find: (name) => byName.get(name),
    pages: [...pages.values()],
    page(cursor) {
      const offset = cursor === undefined ? 0 : cursors.offsetOf(cursor);
      return offset === undefined ? undefined : pages.get(offset);
    },
  };
}

/** Each tool's entry, derived once however many registries it is in (JSON Schemas are costly). */
const described = new WeakMap<object, ToolDescription>();

/** The tools/list entry of a tool, checked against the wire schema. */
export function describeTool<A>(tool: AnyTool<A>): ToolDescription {
  if (isForwarded(tool)) return tool.definition;
  const known = described.get(tool);
  if (known) return known;
  const description = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: objectJsonSchema(tool.input, `${tool.name} input`),
    outputSchema: objectJsonSchema(tool.output, `${tool.name} output`),
    annotations: { ...tool.annotations },
    ...(tool.taskSupport ? { execution: { taskSupport: tool.taskSupport } } : {}),
    ...(tool.meta ? { _meta: { ...tool.meta } } : {}),
  };
  const checked = v.parse(ToolSchema, description);
  described.set(tool, checked);
  return checked;
}

/**
 * The JSON Schema 2020-12 of an object schema, without `$schema`: MCP 2025-11-25 and 2026-07-28
 * read a schema with no `$schema` as 2020-12 ("JSON Schema Usage"), while a 2020-12 `$schema`
 * would make draft-07-only validators of older clients refuse it; for objects, strings,
 * numbers, enums and arrays the keywords mean the same in both. Checks valibot cannot express
 * (v.check) are left out of the JSON Schema and still enforced on every call.
 */
export function objectJsonSchema(
  schema: v.GenericSchema,
  what: string,
): { type: "object" } & Record<string, unknown> {
  const { $schema: _dialect, ...json } = toJsonSchema(schema, {
    errorMode: "ignore",
    target: "draft-2020-12",
  });
  if (json.type !== "object") throw new Error(`The ${what} schema must be an object schema`);
  return json as { type: "object" } & Record<string, unknown>;
}
