// The MCP client's link to one upstream: the handshake, made on first use and shared by
// concurrent callers, made again when the transport lost what the upstream knew of us (a new
// epoch); and each request sent in the agreed revision, with its `_meta`, its id and its
// cancellation, a session lost on the way renewed once.
import { MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import type { Tracing } from "../tracing/tracing.ts";
import { deadlines } from "../deadlines.ts";
import { DISCOVER_PROBE_MS, handshake, modernMeta } from "./handshake.ts";
import { UpstreamError } from "./mcp_client.ts";
import { type RpcChannel, type RpcOutcome, SessionGoneError, untilAborted } from "./rpc_channel.ts";

/** One request's signal, and who hears the notifications the upstream sends about it. */
export interface Exchange {
  readonly signal: AbortSignal;
  readonly onNotification?: (method: string, params: Record<string, unknown>) => void;
}

/** A handshake that stands while the channel's epoch is the one it was made in. */
interface Link {
  readonly epoch: number;
  readonly version: string;
}

export class ClientLink {
  readonly upstream: UpstreamConfig;
  readonly channel: RpcChannel;
  readonly nextId: () => number;
  readonly tracing: Tracing;
  /** Told of each session after the first: what the upstream offers may have changed. */
  readonly renewed: () => void;
  #link: Link | null = null;
  #linking: Promise<Link> | null = null;
  #version: string | null = null;
  #sessions = 0;

  constructor(
    upstream: UpstreamConfig,
    channel: RpcChannel,
    nextId: () => number,
    tracing: Tracing,
    renewed: () => void,
  ) {
    this.upstream = upstream;
    this.channel = channel;
    this.nextId = nextId;
    this.tracing = tracing;
    this.renewed = renewed;
  }

  /** The revision of the last handshake; null before the first. */
  get version(): string | null {
    return this.#version;
  }

  /**
   * A request in the agreed revision, after the handshake; a lost session is renewed once.
   * `meta` and `progress` (a progress token: the request's id) make the params' `_meta`.
   */
  async send(
    method: string,
    params: (id: number) => Record<string, unknown>,
    exchange: Exchange,
    meta: Readonly<Record<string, unknown>> | undefined,
    progress: boolean,
  ): Promise<RpcOutcome> {
    for (let attempt = 1;; attempt++) {
      const known = this.#linked(exchange.signal);
      const current = known instanceof Promise ? await known : known;
      const withMeta = (id: number) => {
        const modern = current.version === MODERN_PROTOCOL_VERSION;
        // The usual legacy call has no `_meta` of ours: its params go as they are.
        if (meta === undefined && !progress && !modern) return params(id);
        const own = {
          ...meta,
          ...(progress ? { progressToken: id } : {}),
          ...(modern ? modernMeta() : {}),
          // 2026-07-28 carries trace context in _meta, over any transport (stdio included).
          ...(modern && this.tracing.on ? this.tracing.carrier() : {}),
        };
        const body = params(id);
        return Object.keys(own).length === 0 ? body : { ...body, _meta: own };
      };
      try {
        return await this.#exchange(method, withMeta, current.version, exchange);
      } catch (error) {
        if (!(error instanceof SessionGoneError)) throw error;
        this.#link = null;
        if (attempt > 1) {
          throw new UpstreamError(
            "protocol",
            `${this.upstream.title} did not keep the session it had just started`,
          );
        }
      }
    }
  }

  async close(): Promise<void> {
    this.#link = null;
    await this.channel.close();
  }

  /** The session to send in: at once while the channel is open and its handshake stands. */
  #linked(signal: AbortSignal): Link | Promise<Link> {
    const link = this.#link;
    return this.channel.ready && link !== null && link.epoch === this.channel.epoch
      ? link
      : this.#relink(signal);
  }

  async #relink(signal: AbortSignal): Promise<Link> {
    await this.channel.open(signal);
    const link = this.#link;
    if (link !== null && link.epoch === this.channel.epoch) return link;
    this.#linking ??= this.#connect()
      .then((made) => this.#link = made)
      .finally(() => this.#linking = null);
    return await untilAborted(this.#linking, signal);
  }

  async #connect(): Promise<Link> {
    const { upstream, channel } = this;
    const deadline = _deadline(upstream.timeoutMs, () => timeout(upstream));
    try {
      await channel.open(deadline.signal);
      const epoch = channel.epoch;
      const agreed = await handshake(
        upstream,
        (method, params, callVersion, probe) => {
          // stdio has no status code to say "not here": a silent legacy child must not cost
          // the whole call (MCP 2026-07-28 "stdio: Backward Compatibility").
          const probing = probe && upstream.transport.kind === "stdio"
            ? _deadline(Math.min(DISCOVER_PROBE_MS, upstream.timeoutMs), () => timeout(upstream))
            : null;
          const signal = probing === null
            ? deadline.signal
            : AbortSignal.any([deadline.signal, probing.signal]);
          return this.#exchange(method, () => params, callVersion, { signal })
            .finally(() => probing?.clear());
        },
        (method, params, callVersion) => channel.notify(method, params, callVersion),
      );
      this.#version = agreed;
      if (++this.#sessions > 1) queueMicrotask(this.renewed);
      return { epoch, version: agreed };
    } finally {
      deadline.clear();
    }
  }

  /** One request, sent and answered, without the handshake. */
  async #exchange(
    method: string,
    params: (id: number) => Record<string, unknown>,
    callVersion: string | null,
    { signal, onNotification }: Exchange,
  ): Promise<RpcOutcome> {
    const id = this.nextId();
    const call = {
      id,
      method,
      params: params(id),
      version: callVersion,
      signal,
      onNotification: onNotification ?? (() => {}),
      trace: this.tracing.carrier(),
    };
    const cancel = () => {
      const reason = signal.reason instanceof UpstreamError ? signal.reason.message : "cancelled";
      this.channel.cancel(call, reason).catch(() => {});
    };
    signal.addEventListener("abort", cancel, { once: true });
    try {
      return await this.channel.request(call);
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  }
}

/** The upstream's whole-call deadline passed. */
export function timeout(upstream: UpstreamConfig): UpstreamError {
  return new UpstreamError(
    "timeout",
    `${upstream.title} did not answer within ${upstream.timeoutMs} ms`,
  );
}

/** A signal aborted with `reason()` after `ms`, unless cleared first. */
function _deadline(ms: number, reason: () => Error) {
  const controller = new AbortController();
  const deadline = deadlines.after(ms, () => controller.abort(reason()));
  return { signal: controller.signal, clear: () => deadline.clear() };
}
