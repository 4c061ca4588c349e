/**
 * What Vestibule measures, for the operator listener's GET /metrics (README: Metrics and
 * readiness). Counters move on the request path; gauges are read from the store when scraped.
 */
import { createOutbox, type DeliveryState } from "../outbox/outbox.ts";
import type { Store } from "../store/store.ts";
import { Counter, type Gauge, Histogram, renderGauge } from "./metrics.ts";

const DELIVERY_STATES: readonly DeliveryState[] = ["pending", "sending", "sent", "failed"];

export interface ServiceMetrics {
  /** Called once per answered request on the three public origins. */
  observeRequest(host: string | null, status: number, seconds: number): void;
  /** The whole exposition, gauges read now. */
  render(): Promise<string>;
}

/** `origins` maps each site's label (base, auth, api) to its origin. */
export function createServiceMetrics(deps: {
  readonly store: Store;
  readonly now: () => number;
  readonly origins: Readonly<Record<"base" | "auth" | "api", string>>;
}): ServiceMetrics {
  const requests = new Counter(
    "vestibule_http_requests_total",
    "HTTP requests answered, by origin (base, auth, api, or other for an unknown Host) and status.",
  );
  const duration = new Histogram(
    "vestibule_http_request_duration_seconds",
    "Time from a request's arrival to its answer, by origin.",
  );
  // The Host forms the host router accepts (with and without the default port), to a label.
  const labelOf = new Map<string, string>();
  for (const [label, origin] of Object.entries(deps.origins)) {
    const url = new URL(origin);
    labelOf.set(url.host.toLowerCase(), label);
    labelOf.set(`${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`, label);
  }
  const outbox = createOutbox(deps);
  const gauges: Gauge[] = [
    {
      name: "vestibule_outbox_messages",
      help: "Outbox deliveries (mail and events), by state.",
      async read() {
        const counts = new Map(DELIVERY_STATES.map((state) => [state, 0]));
        for (const delivery of await outbox.list()) {
          counts.set(delivery.state, (counts.get(delivery.state) ?? 0) + 1);
        }
        return [...counts].map(([state, n]) => [{ state }, n] as const);
      },
    },
    {
      name: "process_resident_memory_bytes",
      help: "Resident memory size in bytes.",
      read: () => Promise.resolve([[{}, Deno.memoryUsage().rss]]),
    },
  ];
  return {
    observeRequest(host, status, seconds) {
      // Unknown Hosts share one label: a client chooses Host, the series must stay few.
      const origin = labelOf.get(host?.toLowerCase() ?? "") ?? "other";
      requests.inc({ origin, status: String(status) });
      duration.observe(seconds, { origin });
    },
    async render() {
      const read = await Promise.all(gauges.map(async (g) => renderGauge(g, await g.read())));
      return [requests.render(), duration.render(), ...read].join("");
    },
  };
}
