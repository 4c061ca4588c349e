// Forwarded tool calls in flight at one endpoint, and what ends one early: its caller cancelling
// it (`notifications/cancelled`, 2025 revisions), its caller going away (every revision: 2026-07-28
// "Cancellation" makes closing the stream the signal), or the server closing the connection
// itself (shutdown past its grace, a deadline of its own). The call's signal says which, as a
// CallEnded reason, so that the audit can.
import type { RequestContext } from "../http/handler.ts";
import type { JsonRpcNotification, RequestId } from "./messages.ts";

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
  /** A notification of `rateKey`'s: `notifications/cancelled` ends that caller's call. */
  notify(rateKey: string, notification: JsonRpcNotification): void;
}

export function createForwardedCalls(): ForwardedCalls {
  const inFlight = new Map<string, AbortController>();
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
      const sources = [[request.signal, byClient], [ended, byServer]] as const;
      for (const [signal, listener] of sources) {
        if (signal?.aborted) listener();
        else signal?.addEventListener("abort", listener, { once: true });
      }
      inFlight.set(key, controller);
      return {
        signal: controller.signal,
        done() {
          for (const [signal, listener] of sources) signal?.removeEventListener("abort", listener);
          if (inFlight.get(key) === controller) inFlight.delete(key);
        },
      };
    },
    notify(rateKey, notification) {
      if (notification.method !== "notifications/cancelled") return;
      const id = notification.params?.["requestId"];
      if (typeof id === "string" || typeof id === "number") {
        inFlight.get(_callKey(rateKey, id))?.abort(
          new CallEnded("client", "the client cancelled it"),
        );
      }
    },
  };
}

/** One caller's request ids are theirs alone: another caller cannot cancel them. */
function _callKey(rateKey: string, id: RequestId): string {
  return `${rateKey}\n${typeof id}:${id}`;
}
