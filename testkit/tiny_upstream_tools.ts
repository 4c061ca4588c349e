// The tools of the tiny upstream (testkit/tiny_upstream.ts): the shapes a test writes a tool in,
// what a handler is given, the record of a call, and ADD_TOOL, the tool it lists by default.
// Never imported by production code.

/** A tool as tools/list shows it; loose, so a test can also list a malformed one. */
export type TinyToolDefinition = { readonly name: string } & Readonly<Record<string, unknown>>;

/** A tools/call result as sent (`content`, `structuredContent`, `isError`, …). */
export type TinyResult = Readonly<Record<string, unknown>>;

export interface TinyCallContext {
  /** Aborted when the client sends notifications/cancelled for this call. */
  readonly signal: AbortSignal;
  /** The request's `_meta`, as sent. */
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  /** Sends notifications/progress when the call asked (progressToken) and answers are SSE. */
  progress(progress: number, total?: number, message?: string): void;
}

export interface TinyTool {
  readonly definition: TinyToolDefinition;
  /** A thrown error becomes a JSON-RPC -32603 answer. */
  handler(
    args: Record<string, unknown>,
    context: TinyCallContext,
  ): TinyResult | Promise<TinyResult>;
}

export interface TinyCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Headers;
}

export const ADD_TOOL: TinyTool = {
  definition: {
    name: "add",
    title: "Add",
    description: "Adds two numbers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    outputSchema: {
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  handler({ a, b }) {
    if (typeof a !== "number" || typeof b !== "number") {
      return { content: [{ type: "text", text: '"a" and "b" must be numbers' }], isError: true };
    }
    const sum = a + b;
    return { content: [{ type: "text", text: String(sum) }], structuredContent: { sum } };
  },
};
