// A tool is defined once; the registry derives its tools/list entry and validates its calls.
import type * as v from "valibot";

export interface ToolAnnotations {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** Reads: nothing changes, asking twice is the same, and nothing outside is touched. */
export const READ: ToolAnnotations = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
});

/** Per-call context. `A` is what the endpoint's authentication produced (void on onboarding). */
export interface ToolCallContext<A> {
  readonly auth: A;
  /** Sends a progress notification when the caller sent _meta.progressToken; no-op otherwise. */
  readonly progress: (progress: number, total?: number, message?: string) => Promise<void>;
}

/** Thrown by a handler: becomes a result with isError: true carrying this message. */
export class ToolError extends Error {
  override name = "ToolError";
}

export interface Tool<A, I, O> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** An object schema; its JSON Schema is the tool's inputSchema. */
  readonly input: v.GenericSchema<unknown, I>;
  /** An object schema; its JSON Schema is the outputSchema, and results are checked against it. */
  readonly output: v.GenericSchema<unknown, O>;
  readonly annotations: ToolAnnotations;
  /** The tool's `_meta` in tools/list. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /**
   * Whether the handler calls `context.progress`: a call with a progressToken is then answered
   * as an event stream, so the notifications can go out before the result.
   */
  readonly reportsProgress?: boolean;
  readonly handler: (args: I, context: ToolCallContext<A>) => Promise<O>;
  /** Text content block rendering; JSON of the output by default. */
  readonly text?: (output: O) => string;
}

/** Any tool of an endpoint whose authentication produces `A`; the registry erases I and O. */
// deno-lint-ignore no-explicit-any
export type AnyTool<A> = Tool<A, any, any>;

/** Identity, so that I and O are inferred from the schemas. */
export function defineTool<A, I, O>(tool: Tool<A, I, O>): Tool<A, I, O> {
  return tool;
}
