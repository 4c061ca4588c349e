// The servers page's inventory, with a fake live set and fake pins: which upstreams serve the
// business, each tool's settings, the pinned definition shown rather than a held one, a hold of
// another definition than the one listed now left for the next look, a definition no store can
// hold marked left out, a pinned tool no longer listed, and nothing of tools for a member.
import assert from "node:assert/strict";
import type { UpstreamConfig } from "../../src/config/upstreams.ts";
import { canonicalSha256 } from "../../src/canonical_json.ts";
import { createServerInventory, TOOLS_SHOWN } from "../../src/gateway/servers/inventory.ts";
import type { LiveTool, LiveUpstream } from "../../src/gateway/upstream_set.ts";
import type { Entry } from "../../src/store/store.ts";
import type {
  PinRecords,
  ToolDefinition,
  UpstreamHold,
  UpstreamPin,
} from "../../src/workspace/domain/upstream_pins.ts";

const config = (name: string, extra: Partial<UpstreamConfig> = {}): UpstreamConfig => ({
  name,
  title: name.toUpperCase(),
  transport: { kind: "http", url: "http://127.0.0.1:1/mcp", headers: {} },
  gated: new Set(),
  hidden: new Set(),
  toolScopes: new Map(),
  ownerOnly: false,
  businesses: null,
  timeoutMs: 5_000,
  maxResponseBytes: 1_000_000,
  forwardIdentity: false,
  rateLimit: { perMinute: 60, burst: 10 },
  auth: null,
  ...extra,
});

const definition = (name: string, description: string): ToolDefinition => ({
  name,
  description,
  inputSchema: { type: "object" },
});

const live = (upstream: UpstreamConfig, listed: ToolDefinition[]): LiveUpstream => ({
  config: upstream,
  state: "ready",
  tools: new Map(
    listed.map((d) => [d.name, { definition: d, hash: canonicalSha256(d) } as LiveTool]),
  ),
  problem: null,
  downSince: null,
  generation: 1,
  settled: () => Promise.resolve(),
  refresh: () => Promise.resolve(),
  call: () => Promise.reject(new Error("not called")),
});

const entry = <T>(value: T): Entry<T> => ({ key: [], value, version: "1" });

Deno.test("the inventory shows each tool as agents are shown it, with its settings and holds", async () => {
  const pinnedQuote = definition("quote", "Quotes a price.");
  const changedQuote = definition("quote", "Quotes a price, in euros.");
  const huge = definition("huge", "x");
  const shop = config("shop", {
    gated: new Set(["refund"]),
    hidden: new Set(["secret"]),
    toolScopes: new Map([["refund", "upstream.shop.refunds"]]),
  });
  const pins: PinRecords = {
    pins: new Map([
      [
        "quote",
        entry<UpstreamPin>({
          definition: pinnedQuote,
          hash: canonicalSha256(pinnedQuote),
          pinnedAt: 1,
          approvedBy: null,
        }),
      ],
      [
        "gone",
        entry<UpstreamPin>({
          definition: definition("gone", "Went away."),
          hash: "h",
          pinnedAt: 1,
          approvedBy: null,
        }),
      ],
    ]),
    holds: new Map([
      [
        "quote",
        entry<UpstreamHold>({
          hash: canonicalSha256(changedQuote),
          change: "changed",
          gateId: "gate-1",
          seenAt: 2,
        }),
      ],
      // A hold of a definition the upstream no longer lists: asked again on the next look.
      ["refund", entry<UpstreamHold>({ hash: "old", change: "new", gateId: "gate-0", seenAt: 1 })],
    ]),
    first: null,
  };
  const inventory = createServerInventory({
    upstreams: () => [
      live(shop, [changedQuote, definition("refund", "Refunds."), huge]),
      live(config("elsewhere", { businesses: ["b2"] }), []),
    ],
    pins: {
      read: (businessId, upstream) => {
        assert.deepEqual([businessId, upstream], ["b1", "shop"]);
        return Promise.resolve(pins);
      },
      problem: (_b, _u, d) => d.name === "huge" ? "its definition is too large" : null,
    },
    connections: null,
  });

  const [row, ...others] = await inventory.of("b1", "a1", true);
  assert.deepEqual(others, [], "an upstream serving other businesses only is left out");
  assert.equal(row!.title, "SHOP");
  const byName = new Map(row!.tools.map((tool) => [tool.name, tool]));
  assert.deepEqual([...byName.keys()], ["quote", "refund", "huge", "gone", "secret"]);

  const quote = byName.get("quote")!;
  assert.equal(quote.description, "Quotes a price.", "the pinned definition, not the held one");
  assert.deepEqual(quote.hold, {
    hash: canonicalSha256(changedQuote),
    change: "changed",
    gateId: "gate-1",
    seenAt: 2,
  });
  assert.equal(quote.scope, "upstream.shop");

  const refund = byName.get("refund")!;
  assert.equal(refund.gated, true);
  assert.equal(refund.scope, "upstream.shop.refunds");
  assert.equal(refund.hold, null);
  assert.equal(refund.pin, null);

  assert.equal(byName.get("huge")!.leftOut, "its definition is too large");
  assert.equal(byName.get("gone")!.listed, false);
  const secret = byName.get("secret")!;
  assert.deepEqual([secret.hidden, secret.listed, secret.description], [true, false, null]);

  const [memberRow] = await inventory.of("b1", "a2", false);
  assert.deepEqual(memberRow!.tools, []);
});

Deno.test("the inventory shows at most TOOLS_SHOWN tools of an upstream, and says how many more", async () => {
  const many = Array.from({ length: TOOLS_SHOWN + 7 }, (_, i) => definition(`t${i}`, "A tool."));
  let measured = 0;
  const inventory = createServerInventory({
    upstreams: () => [live(config("big"), many)],
    pins: {
      read: () => Promise.resolve({ pins: new Map(), holds: new Map(), first: null }),
      problem: () => {
        measured++;
        return null;
      },
    },
    connections: null,
  });
  const [row] = await inventory.of("b1", "a1", true);
  assert.equal(row!.tools.length, TOOLS_SHOWN);
  assert.equal(row!.toolsNotShown, 7);
  assert.equal(measured, TOOLS_SHOWN, "only the tools shown are measured");
});
