// Forwarded tool calls in flight at one endpoint, and what ends one early: its caller cancelling
// it (`notifications/cancelled`, 2025 revisions), its caller going away (every revision: 2026-07-28
// "Cancellation" makes closing the stream the signal), or the server closing the connection
// itself (shutdown past its grace, a deadline of its own). The call's signal says which, as a
// CallEnded reason, so that the audit can. With several replicas, a cancel that lands on another
// replica than its call's reaches it through the store (shared_cancels.ts).
import type { RequestContext } from "../http/handler.ts";
import type { JsonRpcNotification, RequestId } from "./messages.ts";
import type { SharedCancels } from "./shared_cancels.ts";

/** The reason a forwarded call's signal aborts with: who ended it, and why in words. */
export class CallEnded extends Error {
  override name = "CallEnded";
  readonly by: "client" | "server";
  constructor(by: "client" | "server", message: string) {
    super(message);
    this.by = by;
  }
}

export interface ForwardedCall {
  /** Aborted, with a CallEnded, when the call is ended before it answers. */
  readonly signal: AbortSignal;
  /** The call is over: it is no longer cancellable. */
  done(): void;
}

export interface ForwardedCalls {
  start(
    rateKey: string,
    id: RequestId,
    request: Request,
    context: RequestContext,
  ): ForwardedCall;
  /**
   * A notification of `rateKey`'s: `notifications/cancelled` ends that caller's call, here or,
   * through `shared`, on the replica running it.
   */
  notify(rateKey: string, notification: JsonRpcNotification): Promise<void>;
}

export function createForwardedCalls(shared?: SharedCancels): ForwardedCalls {
  const inFlight = new Map<string, AbortController>();
  const cancelled = () => new CallEnded("client", "the client cancelled it");
  const watch = shared === undefined ? null : _watchShared(shared, inFlight, cancelled);
  return {
    start(rateKey, id, request, context) {
      const key = _callKey(rateKey, id);
      const controller = new AbortController();
      const { ended } = context;
      // The server closing the connection does not abort the request's own signal, and the
      // client closing it does not abort `ended`.
      const byServer = () => controller.abort(new CallEnded("server", String(ended!.reason)));
      const byClient = () => {
        if (ended?.aborted) byServer();
        else controller.abort(new CallEnded("client", "the client went away"));
      };
      const { signal } = request;
      if (signal.aborted) byClient();
      else signal.addEventListener("abort", byClient, { once: true });
      const unhook = ended === undefined ? undefined : _whenEnded(ended, byServer);
      inFlight.set(key, controller);
      const unwatch = watch?.(key, controller);
      return {
        signal: controller.signal,
        done() {
          signal.removeEventListener("abort", byClient);
          unhook?.();
          if (inFlight.get(key) === controller) inFlight.delete(key);
          unwatch?.();
        },
      };
    },
    async notify(rateKey, notification) {
      if (notification.method !== "notifications/cancelled") return;
      const id = notification.params?.["requestId"];
      if (typeof id !== "string" && typeof id !== "number") return;
      const key = _callKey(rateKey, id);
      const local = inFlight.get(key);
      if (local !== undefined) local.abort(cancelled());
      else await shared?.publish(key);
    },
  };
}

/**
 * The calls to tell when a connection's `ended` aborts: one listener per connection, whatever
 * the number of calls it carries (a set is cheaper to join and leave than the signal's listeners).
 */
const endings = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `hook` once `ended` aborts (at once if it has); the function returned unhooks it. */
function _whenEnded(ended: AbortSignal, hook: () => void): () => void {
  if (ended.aborted) {
    hook();
    return () => {};
  }
  let hooks = endings.get(ended);
  if (hooks === undefined) {
    const all = hooks = new Set<() => void>();
    endings.set(ended, all);
    ended.addEventListener("abort", () => {
      for (const each of [...all]) each();
    }, { once: true });
  }
  hooks.add(hook);
  return () => hooks.delete(hook);
}

/**
 * Looks, every `pollMs` while calls run here, for a cancel another replica published for one of
 * them (one store read per call). A read the store does not answer is skipped: the next look, or
 * the call's own deadline, comes soon enough. Returns how a call is watched, and unwatched.
 */
function _watchShared(
  shared: SharedCancels,
  inFlight: ReadonlyMap<string, AbortController>,
  reason: () => CallEnded,
) {
  const watched = new Map<string, { controller: AbortController; since: number }>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      for (const [key, call] of watched) {
        if (await shared.cancelled(key, call.since).catch(() => false)) {
          if (inFlight.get(key) === call.controller) call.controller.abort(reason());
        }
      }
    } finally {
      looking = false;
    }
  };
  return (key: string, controller: AbortController) => {
    const call = { controller, since: shared.now() };
    watched.set(key, call);
    timer ??= setInterval(() => void look(), shared.pollMs);
    return () => {
      if (watched.get(key) === call) watched.delete(key);
      if (watched.size === 0 && timer !== null) {
        clearInterval(timer);
        timer = null;
      }
    };
  };
}

/** One caller's request ids are theirs alone: another caller cannot cancel them. */
function _callKey(rateKey: string, id: RequestId): string {
  return `${rateKey}\n${typeof id}:${id}`;
}
