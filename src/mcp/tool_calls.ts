// tools/call, as dispatch answers it: the tool found in the caller's catalogue, its arguments
// checked (ours) or passed on (an upstream's), its result answered as it is or as the task it
// started, progress streamed when asked for, and a forwarded call's request to open a page
// (URL-mode elicitation) in the form the caller's revision knows.
import * as v from "valibot";
import { logEvent, type LogSink } from "../http/request_log.ts";
import { describeIssues } from "../issue_words.ts";
import { encodeMessage, encodeResult } from "./codec.ts";
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  JsonRpcError,
  rpcError,
  URL_ELICITATION_REQUIRED,
} from "./errors.ts";
import {
  connectInputRequests,
  declaresUrlMode,
  retryOf,
  urlElicitationData,
  UrlElicitationRequired,
  type UrlElicitations,
} from "./elicitation.ts";
import {
  type CallToolParams,
  type CallToolResult,
  type JsonRpcRequest,
  META,
  progressNotification,
} from "./messages.ts";
import {
  type DispatchContext,
  errorReply,
  type ModernResults,
  type Outcome,
  type Reply,
  reply,
} from "./outcomes.ts";
import { answersWithTask, taskAnswer, type TaskHost, type TaskMetricState } from "./tasks.ts";
import {
  type AnyTool,
  errorResult,
  type ForwardedResult,
  type ForwardedTool,
  isForwarded,
  type Tool,
  type ToolCallContext,
  ToolError,
} from "./tool.ts";
import { isModern, type ProtocolVersion } from "./versions.ts";

export interface ToolCallOptions<A> {
  readonly log: LogSink;
  readonly results: ModernResults;
  /** Where a tool call may be answered with a task (tasks.ts); none: never. */
  readonly tasks?: TaskHost<A> | undefined;
  /** Told of each task created, and of each task's end once (the operator's metrics). */
  readonly onTask?: ((state: TaskMetricState) => void) | undefined;
  /** Where tools may ask the person to open a page (URL-mode elicitation). */
  readonly elicitations?: UrlElicitations<A> | undefined;
}

/** How a call's result is answered: as it is, or as the task it started. */
type Answer = (result: Readonly<Record<string, unknown>>) => Reply | Promise<Reply>;

/** A forwarded call's way to ask for a page visit; null when the caller cannot be asked. */
type Elicit = (error: UrlElicitationRequired) => Promise<Reply | null>;

export function createToolCalls<A>(
  options: ToolCallOptions<A>,
): (
  request: JsonRpcRequest,
  params: CallToolParams,
  context: DispatchContext<A>,
) => Promise<Outcome> {
  const { log, results, tasks, elicitations } = options;

  const toolResult = (request: JsonRpcRequest, result: CallToolResult, version: ProtocolVersion) =>
    reply(
      encodeResult(request.id, JSON.stringify(isModern(version) ? results.of(result) : result)),
    );

  const forwardedReply = (
    request: JsonRpcRequest,
    result: Readonly<Record<string, unknown>>,
    version: ProtocolVersion,
  ) =>
    reply(
      encodeResult(
        request.id,
        JSON.stringify(isModern(version) ? results.forwarded(result) : result),
      ),
    );

  // A task-capable call answered with the task its result started (tasks.ts taskAnswer).
  const answerAsTask = (
    request: JsonRpcRequest,
    host: TaskHost<A>,
    auth: A,
    version: ProtocolVersion,
    plain: Answer,
  ): Answer =>
  async (result) => {
    const created = await taskAnswer(host, auth, result, version, options.onTask);
    if (created === null) return plain(result);
    const body = isModern(version) ? results.of(created) : created;
    return reply(encodeResult(request.id, JSON.stringify(body)));
  };

  return async (request, params, { auth, version, registry, signal }) => {
    const { name, arguments: args = {}, _meta } = params;
    const tool = registry.find(name);
    if (tool === undefined) {
      throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    let answer: Answer = isForwarded(tool)
      ? (result) => forwardedReply(request, result, version)
      : (result) => toolResult(request, result as CallToolResult, version);
    const task = tasks !== undefined && answersWithTask(request, version, tool);
    if (task) answer = answerAsTask(request, tasks!, auth, version, answer);
    let run: (context: ToolCallContext<A>) => Promise<Reply>;
    if (isForwarded(tool)) {
      const elicit = elicitations &&
        await _urlElicitation(elicitations, results, request, params, auth, version);
      run = (context) => _runForwarded(log, request, tool, args, context, answer, elicit);
    } else {
      const parsed = v.safeParse(tool.input, args);
      if (!parsed.success) {
        const result = errorResult(`Invalid arguments: ${describeIssues(parsed.issues)}`);
        return toolResult(request, result, version);
      }
      run = (context) => _runTool(log, request, tool, parsed.output, context, answer);
    }
    const token = _meta?.progressToken;
    if (token === undefined || !_reportsProgress(tool)) {
      return await run({ auth, signal, task, progress: () => Promise.resolve() });
    }
    return {
      kind: "stream",
      run: (send) =>
        run({
          auth,
          signal,
          task,
          wantsProgress: true,
          progress: (progress, total, message) =>
            send(encodeMessage(progressNotification(token, progress, total, message))),
        }),
    };
  };
}

async function _runTool<A>(
  log: LogSink,
  request: JsonRpcRequest,
  tool: Tool<A, unknown, unknown>,
  args: unknown,
  context: ToolCallContext<A>,
  answer: Answer,
): Promise<Reply> {
  let result: CallToolResult;
  try {
    const output = await tool.handler(args, context);
    const checked = v.safeParse(tool.output, output);
    if (!checked.success) {
      logEvent(log, {
        level: "error",
        message: "tool output does not match its schema",
        tool: tool.name,
        // Paths only: the received values may be account data.
        fields: checked.issues.map((issue) => v.getDotPath(issue) ?? "(root)"),
      });
      return errorReply(log, request, new JsonRpcError(INTERNAL_ERROR, "Internal error"));
    }
    const text = tool.text?.(checked.output) ?? JSON.stringify(checked.output);
    result = {
      content: [{ type: "text", text }],
      structuredContent: checked.output as Record<string, unknown>,
    };
  } catch (error) {
    if (!(error instanceof ToolError)) return errorReply(log, request, error);
    result = errorResult(error.message);
  }
  return await answer(result);
}

async function _runForwarded<A>(
  log: LogSink,
  request: JsonRpcRequest,
  tool: ForwardedTool<A>,
  args: Readonly<Record<string, unknown>>,
  context: ToolCallContext<A>,
  answer: Answer,
  elicit: Elicit | undefined,
): Promise<Reply> {
  let result: ForwardedResult;
  try {
    result = await tool.forward(args, context);
  } catch (error) {
    if (!(error instanceof ToolError)) return errorReply(log, request, error);
    const asked = error instanceof UrlElicitationRequired && await elicit?.(error);
    if (asked) return asked;
    result = errorResult(error.message);
  }
  return await answer(result);
}

/**
 * How a forwarded call may ask for a page visit, redeeming a 2026-07-28 retry's requestState
 * first (a bad one is -32602 and reaches no tool); undefined when it may not ask.
 */
async function _urlElicitation<A>(
  hooks: UrlElicitations<A>,
  results: ModernResults,
  request: JsonRpcRequest,
  params: CallToolParams,
  auth: A,
  version: ProtocolVersion,
): Promise<Elicit | undefined> {
  const call = { name: params.name, arguments: params.arguments ?? {} };
  if (!isModern(version)) {
    return async (error) => {
      if (!await hooks.declared(auth)) return null;
      const data = urlElicitationData(error);
      const body = rpcError(request.id, URL_ELICITATION_REQUIRED, error.prompt, data);
      return { kind: "reply", body: encodeMessage(body), errorCode: URL_ELICITATION_REQUIRED };
    };
  }
  const retry = retryOf(params);
  if (retry.state !== undefined) {
    const problem = await hooks.redeem(auth, call, retry.state);
    if (problem !== null) {
      throw new JsonRpcError(INVALID_PARAMS, `Invalid params: params.requestState ${problem}`);
    }
  }
  if (retry.declined) return;
  return async (error) => {
    if (!declaresUrlMode(params._meta?.[META.clientCapabilities])) return null;
    const asked = results.of({
      resultType: "input_required",
      inputRequests: connectInputRequests(error),
      requestState: await hooks.issue(auth, call),
    });
    return reply(encodeResult(request.id, JSON.stringify(asked)));
  };
}

/** Forwarded tools may always report progress: the upstream decides. */
function _reportsProgress<A>(tool: AnyTool<A>): boolean {
  return isForwarded(tool) || tool.reportsProgress === true;
}
