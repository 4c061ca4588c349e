// The Streamable HTTP transport of MCP 2025-11-25 and 2026-07-28 §"Transports", stateless and
// POST-only. A request meets each step once, in this order: the origin (the route, `mcpRoute`),
// who is asking (`McpAccess.authenticate`, from outside: MCP code never verifies a token), the
// caller's rate limit, media types and body cap, the revision negotiated from its metadata
// (negotiation.ts), for tools/call whether this caller may call that tool (`McpAccess.mayCall`),
// then the pure dispatcher; its outcome leaves as JSON or as SSE (outcome_response.ts). A
// forwarded tool's call can be cancelled (forwarded_calls.ts), and one that outlasts half of
// VESTIBULE_READ_TIMEOUT is answered as an event stream, kept alive, so that the server's own
// deadline never cuts it.
import type { Config } from "../config/config.ts";
import { readBodyCapped } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import type { Handler, RequestContext } from "../http/handler.ts";
import type { RateLimiter } from "../http/rate_limiter.ts";
import { logOutage, type LogSink } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { type Decoded, decodeMessage } from "./codec.ts";
import { createDispatcher, DISPATCHED_METHODS, type ServerInfo } from "./dispatch.ts";
import type { Outcome } from "./outcomes.ts";
import { rpcError, TRANSPORT_ERROR } from "./errors.ts";
import type { CacheScope, JsonRpcRequest, RpcError } from "./messages.ts";
import { negotiate } from "./negotiation.ts";
import { createToolRegistry, type ToolRegistry } from "./registry.ts";
import { createResponder } from "./outcome_response.ts";
import {
  createForwardedCalls,
  type ForwardedCall,
  type ForwardedCalls,
} from "./forwarded_calls.ts";
import type { SharedCancels } from "./shared_cancels.ts";
import type { UrlElicitations } from "./elicitation.ts";
import { type AnyTool, isForwarded } from "./tool.ts";
import {
  acceptsJsonAndSse,
  errorResponse,
  type HeaderMap,
  isJsonMediaType,
  type McpMetrics,
  rejectRequest,
  storeUnavailableResponse,
  tooManyRequests,
} from "./transport.ts";
import { isModern, type ProtocolVersion } from "./versions.ts";
import type { TaskHost } from "./tasks.ts";
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";
import { mcpRequestSpan } from "./request_span.ts";
import { deadlines } from "../deadlines.ts";

/**
 * 2026-07-28 "Caching": how long tools/list and server/discover answers stay fresh, unless the
 * endpoint says otherwise. A catalogue fixed for the life of the process (`listChanged: false`)
 * changes only with a new release, so a client may keep it as long as every public document
 * (`max-age=300`).
 */
const CATALOGUE_TTL_MS = 5 * 60 * 1000;
/** The dispatch signal of anything but a tool call, which no request's end can abort. */
const NOT_A_CALL = new AbortController().signal;

export interface McpEndpointOptions<A, T extends AnyTool<A> = AnyTool<A>> {
  /** Catalogue order is listing order. */
  readonly tools: readonly T[];
  /**
   * Where the tools depend on the caller: the caller's catalogue (which includes `tools`),
   * asked for tools/list and tools/call only. Without it every caller gets `tools`.
   */
  readonly catalogue?: (auth: A) => ToolRegistry<A, T> | Promise<ToolRegistry<A, T>>;
  /** The `ttlMs` caching hint of tools/list and server/discover; five minutes by default. */
  readonly catalogueTtlMs?: number;
  /**
   * Page size, JSON or SSE answers, and the read timeout (a request not answered within it is
   * closed by the server: src/http/connection_pool.ts).
   */
  readonly config: Pick<Config, "mcpPageSize" | "mcpResponse" | "readTimeoutMs">;
  /** 16 KiB on onboarding (spec §8). */
  readonly maxBodyBytes: number;
  /** Who is asking, and what they may call. */
  readonly access: McpAccess<A, T>;
  /** Keyed by the caller's rateKey. */
  readonly rateLimiter: RateLimiter;
  readonly serverInfo: ServerInfo;
  readonly instructions: string;
  /**
   * Who may share the cacheable results: `public` when they are the same for every caller,
   * `private` when they may depend on the caller's authorization (2026-07-28 "Caching").
   */
  readonly cacheScope: CacheScope;
  readonly log: LogSink;
  readonly metrics?: McpMetrics | undefined;
  /** Where a tool call may be answered with a task (src/mcp/tasks.ts); none: never. */
  readonly tasks?: TaskHost<A> | undefined;
  /** Where a tool may ask the person to open a page (elicitation.ts); nobody is asked without. */
  readonly elicitations?: UrlElicitations<A> | undefined;
  /** How a cancel reaches a forwarded call on another replica; without it, only this one's. */
  readonly sharedCancels?: SharedCancels | undefined;
  /** A span per request (request_span.ts) when tracing is on. */
  readonly tracing?: Tracing | undefined;
}

/** Who may use an endpoint: asked before anything of the message is read, then per tool. */
export interface McpAccess<A, T> {
  /**
   * The caller, or the response refusing them (401, 403, or a 429 from `tooManyRequests`). A
   * StoreUnavailableError thrown here is our outage, answered 503, never a refusal.
   */
  authenticate(request: Request, context: RequestContext): Promise<McpCaller<A> | Response>;
  /** For tools/call: undefined when the caller may call `tool`, else the refusal (403 step-up). */
  mayCall?(tool: T, auth: A): Response | undefined | Promise<Response | undefined>;
}

export interface McpCaller<A> {
  readonly auth: A;
  /** The caller's rate-limit bucket. */
  readonly rateKey: string;
}

export function createMcpEndpoint<A, T extends AnyTool<A> = AnyTool<A>>(
  options: McpEndpointOptions<A, T>,
): Handler {
  const { config, maxBodyBytes, rateLimiter, access, metrics } = options;
  const tracing = options.tracing ?? NO_TRACING;
  const registry = createToolRegistry<A, T>(options.tools, { pageSize: config.mcpPageSize });
  const { catalogue } = options;
  const dispatcher = createDispatcher<A>({
    serverInfo: options.serverInfo,
    instructions: options.instructions,
    cache: { ttlMs: options.catalogueTtlMs ?? CATALOGUE_TTL_MS, scope: options.cacheScope },
    log: options.log,
    tasks: options.tasks,
    onTask: metrics?.task,
    elicitations: options.elicitations,
  });
  const respond = createResponder({
    alwaysSse: config.mcpResponse === "sse",
    log: options.log,
    metrics,
    tracing,
  });
  const forwarded = createForwardedCalls(options.sharedCancels);
  // A forwarded call not answered by then is answered as an event stream: the read timeout
  // closes a request whose answer has not started, and the upstream's own timeout may be longer.
  const jsonWindowMs = config.readTimeoutMs / 2;

  // The store did not answer while the request needed it: the client is to come back.
  const unavailable = (request: JsonRpcRequest, error: unknown): Response => {
    if (!(error instanceof StoreUnavailableError)) throw error;
    logOutage(options.log, error, { method: request.method });
    metrics?.error(TRANSPORT_ERROR);
    return storeUnavailableResponse(request.id);
  };

  // A request past its transport checks: the caller's tool, the dispatcher, the answer.
  const answer = async (
    message: JsonRpcRequest,
    version: ProtocolVersion,
    caller: McpCaller<A>,
    request: Request,
    context: RequestContext,
  ): Promise<Response> => {
    const { auth } = caller;
    const { method } = message;
    let callers = registry;
    let tool: T | undefined;
    let outcome: Outcome;
    let call: ForwardedCall | undefined;
    try {
      // Only where tools depend on the caller, and only when the caller's is not known yet: a
      // fixed or known catalogue costs no await.
      if (catalogue && (method === "tools/list" || method === "tools/call")) {
        const found = catalogue(auth);
        callers = found instanceof Promise ? await found : found;
      }
      if (metrics) _countRequest(metrics, message, callers);
      // Only a tool call watches for its client going away, so only then is the request's
      // signal read: reading it costs the engine a cancel hook. Aborted only when the client goes
      // away: deno.json opts out of the legacy abort that also fired after every successful
      // response ("no-legacy-abort").
      let signal = NOT_A_CALL;
      if (method === "tools/call") {
        signal = request.signal;
        const name = message.params?.["name"];
        tool = typeof name === "string" ? callers.find(name) : undefined;
        const refusal = tool && await access.mayCall?.(tool, auth);
        if (refusal) return refusal;
        if (tool && isForwarded(tool)) {
          call = forwarded.start(caller.rateKey, message.id, request, context);
          signal = call.signal;
        }
      }
      const dispatched = dispatcher.dispatch(message, {
        auth,
        version,
        registry: callers,
        signal,
      });
      outcome = call === undefined
        ? await dispatched
        : await _within(dispatched, jsonWindowMs) ?? _later(dispatched);
    } catch (error) {
      call?.done();
      return unavailable(message, error);
    }
    if (call === undefined) return respond(outcome, message, isModern(version));
    if (outcome.kind === "reply") {
      call.done();
      return respond(outcome, message, isModern(version));
    }
    const { run } = outcome;
    const ended = call;
    const tracked: Outcome = {
      kind: "stream",
      run: (send) => run(send).finally(() => ended.done()),
    };
    return respond(tracked, message, isModern(version));
  };

  return async (request, context) => {
    const caller = await _authenticate(access, options.log, request, context);
    if (caller instanceof Response) {
      await request.body?.cancel();
      return caller;
    }
    const decision = rateLimiter.take(caller.rateKey);
    if (!decision.allowed) {
      await request.body?.cancel();
      return tooManyRequests(decision.retryAfterSeconds);
    }
    const refused = _refusedHead(request, metrics);
    if (refused !== null) return await refused;
    let body: Uint8Array;
    try {
      body = await readBodyCapped(request, maxBodyBytes);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      const refusal = rpcError(null, TRANSPORT_ERROR, error.message);
      return _fail(metrics, error.status, refusal, error.headers);
    }
    const decoded = decodeMessage(body);
    if (decoded.kind === "invalid") return _fail(metrics, 400, decoded.error);
    const negotiated = negotiate(request.headers, decoded);
    if (!negotiated.ok) return _fail(metrics, 400, negotiated.error);
    const { version } = negotiated;
    if (decoded.kind !== "request") return await _accepted(forwarded, options.log, caller, decoded);
    if (!tracing.on) return await answer(decoded.request, version, caller, request, context);
    const span = mcpRequestSpan(decoded.request, version, request.headers);
    return await tracing.span(
      span.name,
      span.options,
      () => answer(decoded.request, version, caller, request, context),
    );
  };
}

/** The caller, or the refusal; a store outage meanwhile is a 503, never a 401. */
async function _authenticate<A, T>(
  access: McpAccess<A, T>,
  log: LogSink,
  request: Request,
  context: RequestContext,
): Promise<McpCaller<A> | Response> {
  try {
    return await access.authenticate(request, context);
  } catch (error) {
    // Our outage, not a bad credential: a 401 would tell the agent to throw its token away.
    if (!(error instanceof StoreUnavailableError)) throw error;
    logOutage(log, error, { during: "authentication" });
    return storeUnavailableResponse(null);
  }
}

/** A JSON-RPC error the endpoint answers itself, counted. */
function _fail(
  metrics: McpMetrics | undefined,
  status: number,
  error: RpcError,
  headers?: HeaderMap,
): Response {
  metrics?.error(error.error.code);
  return errorResponse(status, error, headers);
}

/**
 * The transport's checks of a request's head: both media types (415, 406); null when they hold.
 * Apart from the body's, so that a request that passes costs no promise here.
 */
function _refusedHead(
  request: Request,
  metrics: McpMetrics | undefined,
): Promise<Response> | null {
  let status: number;
  let message: string;
  if (!isJsonMediaType(request.headers.get("Content-Type"))) {
    status = 415;
    message = "Unsupported Media Type: Content-Type must be application/json";
  } else if (!acceptsJsonAndSse(request.headers.get("Accept"))) {
    status = 406;
    message = "Not Acceptable: Accept must list both application/json and text/event-stream";
  } else {
    return null;
  }
  metrics?.error(TRANSPORT_ERROR);
  return rejectRequest(request, status, message);
}

/**
 * A notification or a response: 202. A `notifications/cancelled` first ends the caller's call it
 * names, here or on the replica running it; a store that does not answer meanwhile is a 503.
 */
async function _accepted<A>(
  forwarded: ForwardedCalls,
  log: LogSink,
  caller: McpCaller<A>,
  decoded: Exclude<Decoded, { kind: "invalid" | "request" }>,
): Promise<Response> {
  if (decoded.kind === "notification") {
    try {
      await forwarded.notify(caller.rateKey, decoded.notification);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      logOutage(log, error, { method: decoded.notification.method });
      return storeUnavailableResponse(null);
    }
  }
  return new Response(null, { status: 202 });
}

/** The outcome when it comes within `ms`, else null (it is still on its way). */
function _within(outcome: Promise<Outcome>, ms: number): Promise<Outcome | null> {
  return new Promise((resolve, reject) => {
    const deadline = deadlines.after(ms, () => resolve(null));
    outcome.then((ready) => {
      deadline.clear();
      resolve(ready);
    }, (error: unknown) => {
      deadline.clear();
      reject(error);
    });
  });
}

/** An outcome still on its way, as a stream: its response goes out when it comes. */
function _later(outcome: Promise<Outcome>): Outcome {
  return {
    kind: "stream",
    run: async (send) => {
      const ready = await outcome;
      return ready.kind === "reply" ? ready : await ready.run(send);
    },
  };
}

/** Bounded labels only: a client chooses both the method and the tool name. */
function _countRequest<A>(
  metrics: McpMetrics,
  request: JsonRpcRequest,
  registry: ToolRegistry<A>,
): void {
  const { method } = request;
  if (method !== "tools/call") {
    metrics.request(DISPATCHED_METHODS.has(method) ? method : "other", undefined);
    return;
  }
  const name = request.params?.["name"];
  const tool = typeof name === "string" ? registry.find(name) : undefined;
  // Forwarded tools are as many as their servers list: one label for all (bounded).
  metrics.request(
    method,
    tool === undefined ? "other" : isForwarded(tool) ? "forwarded" : tool.name,
  );
}
