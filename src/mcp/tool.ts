// A tool is defined once; the registry derives its tools/list entry and validates its calls.
// A forwarded tool is defined elsewhere (an upstream MCP server): listed as given, called with
// the arguments as they came, its result passed on as it came back.
import type * as v from "valibot";
import type { ToolDescription } from "./messages.ts";

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

/** Overwrites existing state: clients should confirm with their human first. */
export const OVERWRITES: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
});

/** Adds something new and leaves what exists alone. */
export const ADDS: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
});

/** Per-call context. `A` is what the endpoint's authentication produced (void on onboarding). */
export interface ToolCallContext<A> {
  readonly auth: A;
  /** Sends a progress notification when the caller sent _meta.progressToken; no-op otherwise. */
  readonly progress: (progress: number, total?: number, message?: string) => Promise<void>;
  /**
   * The caller sent _meta.progressToken: only then does a forwarded call ask its upstream for
   * progress, which would otherwise come only to be dropped.
   */
  readonly wantsProgress?: boolean;
  /** Aborted when the caller cancels the request or goes away. */
  readonly signal: AbortSignal;
  /** The caller takes a task for an answer (tasks.ts): a forwarded tool may start one. */
  readonly task?: boolean;
}

/** Thrown by a handler: becomes a result with isError: true carrying this message. */
export class ToolError extends Error {
  override name = "ToolError";
}

/** A tools/call result that reports a failure the caller can act on. */
export function errorResult(
  text: string,
): { content: { type: "text"; text: string }[]; isError: true } {
  return { content: [{ type: "text", text }], isError: true };
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
  /** "optional": a call may be answered with a task (tasks.ts), listed as execution.taskSupport. */
  readonly taskSupport?: "optional";
  readonly handler: (args: I, context: ToolCallContext<A>) => Promise<O>;
  /** Text content block rendering; JSON of the output by default. */
  readonly text?: (output: O) => string;
}

/**
 * A tool answered by someone else. Its arguments are the caller's JSON object, checked by
 * whoever answers; its result (content of any type, structuredContent, isError, _meta) is
 * passed on unchanged. Every call may report progress.
 */
export interface ForwardedTool<A> {
  readonly name: string;
  /** The tools/list entry as it is served, named `name`. */
  readonly definition: ToolDescription;
  readonly forward: (
    args: Readonly<Record<string, unknown>>,
    context: ToolCallContext<A>,
  ) => Promise<ForwardedResult>;
}

/** A tools/call result from elsewhere: `content` is there, the rest is passed on as it is. */
export type ForwardedResult = Readonly<Record<string, unknown>> & {
  readonly content: readonly unknown[];
};

/** Any tool of an endpoint whose authentication produces `A`; the registry erases I and O. */
// deno-lint-ignore no-explicit-any
export type AnyTool<A> = Tool<A, any, any> | ForwardedTool<A>;

export function isForwarded<A>(tool: AnyTool<A>): tool is ForwardedTool<A> {
  return "forward" in tool;
}

/** Identity, so that I and O are inferred from the schemas. */
export function defineTool<A, I, O>(tool: Tool<A, I, O>): Tool<A, I, O> {
  return tool;
}
