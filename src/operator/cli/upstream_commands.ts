// Admin commands: the upstream MCP servers of VESTIBULE_UPSTREAMS, as this machine reaches them
// now, and each business's pinned definitions of their tools; a new key for upstream tokens.
import * as v from "valibot";
import { createAccounts } from "../../accounts/accounts.ts";
import type { Business } from "../../accounts/model.ts";
import { serves } from "../../gateway/upstream_calls.ts";
import type { LiveTool } from "../../gateway/upstream_set.ts";
import { servedToolName } from "../../config/upstreams.ts";
import type { UpstreamConfig, UpstreamsConfig } from "../../config/upstreams.ts";
import { loadUpstreams, UpstreamsFileError } from "../../gateway/upstreams_file.ts";
import { newVaultKey } from "../../gateway/connect/vault.ts";
import {
  createUpstreamPins,
  firstListingPending,
  type PinRecords,
  type UpstreamPins,
} from "../../workspace/domain/upstream_pins.ts";
import { describeTransport, type Probe, probeUpstreams } from "./upstream_probe.ts";
import { forgetRegistration, resealConnections } from "./upstream_connections.ts";
import { heldProblem, unlistedNames } from "../../gateway/unlisted_names.ts";
import { upstreamsTable } from "./upstreams_table.ts";

import { type AdminDeps, AdminError, command, IdSchema, type Runnable } from "./command.ts";

export const UPSTREAM_COMMANDS: Readonly<Record<string, Runnable>> = {
  upstreams: command({
    usage: "upstreams [--json]",
    summary:
      "Connect to each upstream of VESTIBULE_UPSTREAMS now and show, as a table, each one's state, how many tools it lists, how many are gated, hidden, held for an owner's approval (in some business) or left out, and its last error; then each held or left-out tool by business. Held when the file names a tool it does not list (each with the nearest listed tool: the gateway then serves none of its tools). With --json, one JSON document: the transport, the protocol revision, and its tools as served (<upstream>__<tool>) with their scope, gated or hidden, and per business the pinned definition's state: pinned, changed or new (held by a gate), unpinned (pinned at the business's first listing), or left out (no store can hold its definition, and why). Never a header's or an environment variable's value.",
    switches: ["json"],
    options: v.strictObject({ json: v.optional(v.literal("on", "takes no value")) }),
    async run({ json }, deps) {
      const probes = await probeUpstreams(await readUpstreams(deps));
      const businesses = await createAccounts(deps.store, deps.now).listBusinesses();
      const pins = createUpstreamPins(deps.store);
      const upstreams = await Promise.all(
        probes.map((probe) => _describe(probe, businesses, pins)),
      );
      if (json !== undefined) return { upstreams };
      deps.out(upstreamsTable(upstreams));
      return undefined;
    },
  }),
  "upstream-key": command({
    usage: "upstream-key",
    summary:
      "Print a new key for VESTIBULE_UPSTREAM_KEY_FILE (32 random bytes in base64url), and nothing else on standard output: the file's first line seals people's upstream tokens, every line opens them.",
    options: v.strictObject({}),
    run(_options, { out }) {
      out(newVaultKey());
      return Promise.resolve(undefined);
    },
  }),
  "reseal-upstream-tokens": command({
    usage: "reseal-upstream-tokens",
    summary:
      "Seal every stored upstream token again under the first key of VESTIBULE_UPSTREAM_KEY_FILE (after adding a new first key and restarting; then the old line can go). Prints how many were resealed, and how many no key of the file opens (unopened: left as they are; their people are asked to reconnect, the registration is made again).",
    options: v.strictObject({}),
    async run(_options, deps) {
      return await resealConnections(deps);
    },
  }),
  "forget-upstream-registration": command({
    usage: "forget-upstream-registration --upstream NAME",
    summary:
      "Forget Vestibule's registration at the authorization server of a per-person upstream (its client id and sealed secret), for example after the key file lost the key that sealed it: the next person to connect registers again, and connections made with the old client ask their person to reconnect.",
    options: v.strictObject({ upstream: IdSchema }),
    async run({ upstream }, deps) {
      return { forgotten: await forgetRegistration(deps, upstream) };
    },
  }),
};

/** VESTIBULE_UPSTREAMS as the server reads it at start-up; a refusal when unset or malformed. */
export async function readUpstreams({ config }: AdminDeps): Promise<UpstreamsConfig> {
  if (config.upstreamsFile === null) {
    throw new AdminError("VESTIBULE_UPSTREAMS is not set: the gateway has no upstreams");
  }
  try {
    return await loadUpstreams(config.upstreamsFile);
  } catch (error) {
    if (error instanceof UpstreamsFileError) throw new AdminError(error.message);
    throw error;
  }
}

async function _describe(probe: Probe, all: readonly Business[], pins: UpstreamPins) {
  const upstream = probe.upstream;
  const transport = upstream.transport;
  const businesses = all.filter((business) => serves(upstream, business.id));
  const records = new Map(
    await Promise.all(
      businesses.map(async (b) => [b.id, await pins.read(b.id, upstream.name)] as const),
    ),
  );
  return {
    name: upstream.name,
    title: upstream.title,
    transport: transport.kind === "http"
      ? { kind: "http", url: describeTransport(upstream), headers: Object.keys(transport.headers) }
      : {
        kind: "stdio",
        command: describeTransport(upstream),
        env: Object.keys(transport.env),
        cwd: transport.cwd,
      },
    ...(!probe.reached
      ? { state: "not answering", problem: probe.problem }
      : "signIn" in probe
      ? { state: "each person signs in", issuer: probe.signIn.issuer }
      : _answers(upstream, probe.protocolVersion, probe.tools)),
    ownerOnly: upstream.ownerOnly,
    // A per-person upstream lists only with someone's token: its tools are not probed.
    tools: probe.reached && !("signIn" in probe)
      ? probe.tools.map((tool) => _describeTool(upstream, tool, businesses, records, pins))
      : [],
  };
}

/** `answers`, or `held` when the file names a tool it does not list (the gateway serves none). */
function _answers(
  upstream: UpstreamConfig,
  protocolVersion: string | null,
  tools: readonly LiveTool[],
) {
  const unlisted = unlistedNames(upstream, tools.map((tool) => tool.definition.name));
  if (unlisted.length === 0) return { state: "answers", protocolVersion };
  return { state: "held", protocolVersion, problem: heldProblem(upstream, unlisted), unlisted };
}

function _describeTool(
  upstream: UpstreamConfig,
  tool: LiveTool,
  businesses: readonly Business[],
  records: ReadonlyMap<string, PinRecords>,
  pins: UpstreamPins,
) {
  const name = tool.definition.name;
  const hidden = upstream.hidden.has(name);
  return {
    name: servedToolName(upstream.name, name),
    scope: upstream.toolScopes.get(name) ?? `upstream.${upstream.name}`,
    gated: upstream.gated.has(name),
    hidden,
    sha256: tool.hash,
    // A hidden tool is never listed, so never pinned.
    ...(hidden ? {} : {
      businesses: businesses.map((business) =>
        _pinState(business, upstream.name, tool, records.get(business.id)!, pins.problem)
      ),
    }),
  };
}

/**
 * How the gateway serves a listed tool in one business: `pinned` as approved; `changed` (listed
 * as pinned, calls refused) or `new` (not listed) until an owner approves the gate (`leftOut`
 * when an owner left it out of one); `unpinned` before the business's first listing, which pins
 * everything as it is; `left out` when no store can hold its definition (`problem` says why).
 */
function _pinState(
  business: Business,
  upstream: string,
  tool: LiveTool,
  records: PinRecords,
  problemOf: UpstreamPins["problem"],
) {
  const name = tool.definition.name;
  const problem = problemOf(business.id, upstream, tool.definition);
  if (problem !== null) {
    return { businessId: business.id, business: business.name, state: "left out", problem };
  }
  const pin = records.pins.get(name)?.value;
  const state = firstListingPending(records)
    ? "unpinned"
    : pin?.hash === tool.hash
    ? "pinned"
    : pin === undefined
    ? "new"
    : "changed";
  if (state !== "changed" && state !== "new") {
    return { businessId: business.id, business: business.name, state };
  }
  // A hold of another definition is stale: the gateway opens a new gate when it meets this one.
  const hold = records.holds.get(name)?.value;
  const current = hold?.hash === tool.hash ? hold : undefined;
  return {
    businessId: business.id,
    business: business.name,
    state,
    gateId: current?.gateId ?? null,
    ...(current?.leftOut ? { leftOut: true } : {}),
  };
}
