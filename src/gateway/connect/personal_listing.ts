// The tools of an upstream each person signs in to: known once someone has connected (each
// connection's first session lists them) and stored (`["upstream_listing", name]`), so that every
// replica serves the same tools, read again when the stored listing is older than a moment.
import type { UpstreamConfig } from "../../config/upstreams.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import type { Store } from "../../store/store.ts";
import type { McpClient, UpstreamTool } from "../mcp_client.ts";
import { heldProblem, logUnlisted } from "../unlisted_names.ts";
import { type Caller, type LiveTool, liveTools, sameTools } from "../upstream_set.ts";

/** How long the stored listing, as read, stands for this process. */
const LISTING_FRESH_MS = 2_000;

interface StoredListing {
  readonly tools: readonly UpstreamTool[];
  readonly listedAt: number;
}

export class PersonalListing {
  readonly config: UpstreamConfig;
  readonly store: Store;
  readonly log: LogSink;
  readonly now: () => number;
  #tools: ReadonlyMap<string, LiveTool> | null = null;
  /** Why its tools are held (unlisted_names.ts); null while served. */
  #held: string | null = null;
  #generation = 0;
  #readAt = -Infinity;
  #reading: Promise<void> | null = null;

  constructor(
    config: UpstreamConfig,
    store: Store,
    log: LogSink,
    now: () => number,
  ) {
    this.config = config;
    this.store = store;
    this.log = log;
    this.now = now;
  }

  get tools(): ReadonlyMap<string, LiveTool> | null {
    return this.#tools;
  }

  get held(): string | null {
    return this.#held;
  }

  /** Counts the changes of the tools. */
  get generation(): number {
    return this.#generation;
  }

  /** The stored listing read again, unless it was a moment ago. */
  async settled(): Promise<void> {
    if (this.now() - this.#readAt >= LISTING_FRESH_MS) await this.read();
  }

  /** The stored listing read again; one read at a time. */
  read(): Promise<void> {
    this.#reading ??= (async () => {
      const stored = await this.store.get<StoredListing>(_listingKey(this.config.name));
      this.#readAt = this.now();
      if (stored !== null) this.#adopt(stored.value.tools);
    })().finally(() => this.#reading = null);
    return this.#reading;
  }

  /** Lists the tools with a person's session, for everyone: stored when they changed. */
  async listWith(caller: Caller, client: McpClient): Promise<void> {
    const { config, log, now } = this;
    try {
      const listed = await client.listTools(AbortSignal.timeout(config.timeoutMs));
      const before = this.#tools;
      this.#adopt(listed);
      this.#readAt = now();
      if (before !== this.#tools) {
        await this.store.set(_listingKey(config.name), { tools: listed, listedAt: now() });
        logEvent(log, {
          level: "info",
          message: "upstream listed with a person's connection",
          upstream: config.name,
          tools: this.#tools!.size,
        });
      }
    } catch (error) {
      logEvent(log, {
        level: "warn",
        message: "upstream could not be listed with a person's connection",
        upstream: config.name,
        businessId: caller.businessId,
        problem: (error as Error).message,
      });
    }
  }

  #adopt(listed: readonly UpstreamTool[]): void {
    const { tools: next, unlisted } = liveTools(this.config, listed);
    const held = unlisted.length === 0 ? null : heldProblem(this.config, unlisted);
    // Every replica reads the stored listing again and again: logged when it changes only.
    if (held !== null && held !== this.#held) logUnlisted(this.log, this.config, unlisted);
    this.#held = held;
    if (!sameTools(this.#tools, next)) {
      this.#tools = next;
      this.#generation++;
    }
  }
}

function _listingKey(upstream: string): string[] {
  return ["upstream_listing", upstream];
}
