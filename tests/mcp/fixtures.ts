// Test tools exercising every path of the dispatcher (never imported by production code).
import * as v from "valibot";
import { type AnyTool, defineTool, ToolError } from "../../src/mcp/tool.ts";

const annotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

export const echoTool = defineTool<
  string,
  { text: string; count: number },
  { echoed: string; by: string }
>({
  name: "echo",
  title: "Echo",
  description: "Repeats text.",
  input: v.strictObject({
    text: v.pipe(v.string(), v.minLength(1)),
    count: v.pipe(v.number(), v.integer(), v.minValue(1)),
  }),
  output: v.object({ echoed: v.string(), by: v.string() }),
  annotations,
  meta: { "example.com/origin": "tests" },
  handler: (args, context) =>
    Promise.resolve({ echoed: args.text.repeat(args.count), by: context.auth }),
  text: (output) => `echo: ${output.echoed}`,
});

export const refuseTool = defineTool<string, Record<string, never>, { never: string }>({
  name: "refuse",
  title: "Refuse",
  description: "Always refuses with a ToolError.",
  input: v.strictObject({}),
  output: v.object({ never: v.string() }),
  annotations,
  handler: () => Promise.reject(new ToolError("No business is selected")),
});

export const crashTool = defineTool<string, Record<string, never>, { never: string }>({
  name: "crash",
  title: "Crash",
  description: "Throws an unexpected error.",
  input: v.strictObject({}),
  output: v.object({ never: v.string() }),
  annotations,
  handler: () => Promise.reject(new Error("database password is hunter2")),
});

export const liarTool = defineTool<string, Record<string, never>, { count: number }>({
  name: "liar",
  title: "Liar",
  description: "Returns output that does not match its schema.",
  input: v.strictObject({}),
  output: v.object({ count: v.number() }),
  annotations,
  handler: () => Promise.resolve({ count: "three" } as unknown as { count: number }),
});

export const progressTool = defineTool<string, { steps: number }, { done: number }>({
  name: "count_up",
  title: "Count up",
  description: "Reports progress once per step.",
  input: v.strictObject({ steps: v.pipe(v.number(), v.integer(), v.minValue(0)) }),
  output: v.object({ done: v.number() }),
  annotations,
  reportsProgress: true,
  async handler(args, context) {
    for (let i = 1; i <= args.steps; i++) await context.progress(i, args.steps, `step ${i}`);
    return { done: args.steps };
  },
});

export const TEST_TOOLS: readonly AnyTool<string>[] = [
  echoTool,
  refuseTool,
  crashTool,
  liarTool,
  progressTool,
];
