/**
 * The scopes of spec §5 with their meanings in the spec's own words, and which of them only
 * a business owner can grant; and the catalogue a service serves, which adds the scopes of its
 * upstream MCP servers (VESTIBULE_UPSTREAMS) after them.
 */
import type { UpstreamsConfig } from "../config/upstreams.ts";
import type { WorkspaceToolChoice } from "../config/config.ts";

/**
 * What `app.access` opens when only the own tools every agent needs are served
 * (VESTIBULE_WORKSPACE_TOOLS=gateway, src/workspace/mcp/catalogue.ts): the consent page says
 * what is served, not the workflows and business data that are not.
 */
const GATEWAY_APP_ACCESS =
  "read the business's name and the approvals asked for through its agents; create, restart and verify the agent connection test for the business";

export const SCOPE_MEANINGS = Object.freeze(
  {
    "openid": "identify the account",
    "profile": "view name and profile",
    "email": "view e-mail address",
    "offline_access": "keep access when the user is away",
    "app.access":
      "read workflows and business data; create, restart and verify the agent connection test for the business",
    "agent.sessions": "create and use the user's private agent conversations in the business",
    "business.name": "change only the business display name",
    "workflows.run": "start paid or live workflows in the business",
    "workflows.simulate": "simulate workflows using connected reads",
    "skills.draft": "prepare skill drafts for human installation",
    "connections.manage": "connect, reconnect or disconnect business services",
    "connections.helpdesk.request":
      "prepare helpdesk setup or workload detach for business-owner review",
    "connections.mailbox.request":
      "prepare inbox setup, reconnect or detach for human review and consent",
    "automation.request":
      "prepare activity controls and bounded automatic-action authority for human owner review",
    "automation.revoke": "revoke automatic-action authority without enabling disabled activities",
    "members.read": "view members and invitation delivery status",
    "members.request": "prepare access changes for human confirmation",
    "triggers.read": "view event triggers and eligible configurations",
    "triggers.manage": "disable triggers or prepare trigger creation for human confirmation",
    "packs.manage": "enable, configure, upgrade or disable vertical packs",
    "effects.request": "prepare unknown external write reconciliation for human confirmation",
    "gates.redeliver": "retry delivery of an existing human decision",
    "notifications.manage":
      "change the user's own approval notification settings, link the matching chat-workspace account, send oneself a test",
    "billing.read": "view the business subscription, usage and invoices",
    "billing.manage": "change the business subscription and payment details",
  } as const,
);

export type Scope = keyof typeof SCOPE_MEANINGS;

/** Every supported scope, in the spec's order (metadata `scopes_supported`). */
export const SUPPORTED_SCOPES: readonly Scope[] = Object.freeze(
  Object.keys(SCOPE_MEANINGS) as Scope[],
);

/** Granted when a client asks for no scope (spec §5.7: a client starts with app.access). */
export const DEFAULT_SCOPES: readonly Scope[] = Object.freeze(["app.access"]);

/**
 * Scopes a member cannot delegate: they spend money, change who has access, change the
 * business itself, or hand out automatic-action authority. Only an owner can grant them.
 */
export const OWNER_ONLY_SCOPES: ReadonlySet<Scope> = new Set<Scope>([
  "business.name",
  "workflows.run",
  "connections.manage",
  "automation.request",
  "members.request",
  "packs.manage",
  "billing.manage",
]);

/** Scopes that can spend the business's money: paid workflow runs, the subscription. */
export const MONEY_SCOPES: ReadonlySet<Scope> = new Set<Scope>(["workflows.run", "billing.manage"]);

export const OWNER_ONLY_REASON = "Only an owner of the business can grant this permission.";

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_MEANINGS, value);
}

export type ScopeParse = { ok: true; scopes: string[] } | { ok: false; unknown: string };

/**
 * Every scope one service knows: the spec's, in the spec's order, then each upstream's in file
 * order (`upstream.<name>`, then the `upstream.<name>.<word>` its `scopes` field maps tools
 * to). Own tools keep the `Scope` type; an upstream's scopes are plain strings.
 */
export interface ScopeCatalogue {
  /** Authorization-server metadata `scopes_supported`, the consent and onboarding lists. */
  readonly supported: readonly string[];
  /**
   * The scopes the workspace resource names (protected-resource `scopes_supported`, challenge
   * `scope`): every scope but offline_access, which asks the authorization server for refresh
   * tokens and is no requirement of the resource (MCP 2026-07-28 "Refresh Tokens": resource
   * servers SHOULD NOT name it; clients add it themselves from the authorization server's
   * metadata).
   */
  readonly resource: readonly string[];
  /** What granting it allows, in words a person reads on the consent page. */
  meaning(scope: string): string;
  /** Whether only a business owner can grant it. */
  ownerOnly(scope: string): boolean;
  isScope(value: string): boolean;
  /**
   * Parses a space-delimited `scope` (RFC 6749 §3.3) into known scopes in catalogue order,
   * without duplicates; the first unknown one is reported.
   */
  parse(value: string): ScopeParse;
}

/** A service's catalogue, which learns the upstreams of a reloaded file (src/app.ts). */
export interface LiveScopeCatalogue extends ScopeCatalogue {
  /**
   * From now on, the spec's scopes and those of `config`'s upstreams: an added upstream's scopes
   * become known, a removed one's are no longer offered (tokens that hold them keep them).
   */
  learn(config: UpstreamsConfig): void;
}

/** Built once per service (src/app.ts) from its upstreams and the own tools it serves. */
export function createScopeCatalogue(
  config: UpstreamsConfig,
  workspaceTools: WorkspaceToolChoice = "all",
): LiveScopeCatalogue {
  let known = _known(config, workspaceTools);
  return {
    get supported() {
      return known.supported;
    },
    get resource() {
      return known.resource;
    },
    meaning: (scope) => known.meanings.get(scope) ?? "",
    ownerOnly: (scope) => known.ownerOnly.has(scope),
    isScope: (value) => known.meanings.has(value),
    parse(value) {
      const { meanings, supported } = known;
      const wanted = new Set<string>();
      for (const part of value.split(" ")) if (part !== "") wanted.add(part);
      for (const scope of wanted) if (!meanings.has(scope)) return { ok: false, unknown: scope };
      return { ok: true, scopes: supported.filter((s) => wanted.has(s)) };
    },
    learn(next) {
      known = _known(next, workspaceTools);
    },
  };
}

function _known(config: UpstreamsConfig, workspaceTools: WorkspaceToolChoice) {
  const meanings = new Map<string, string>(Object.entries(SCOPE_MEANINGS));
  if (workspaceTools === "gateway") meanings.set("app.access", GATEWAY_APP_ACCESS);
  const ownerOnly = new Set<string>(OWNER_ONLY_SCOPES);
  for (const upstream of config.upstreams) {
    const own = `upstream.${upstream.name}`;
    const words = new Map<string, string[]>();
    for (const [tool, scope] of upstream.toolScopes) {
      if (scope.startsWith(`${own}.`)) words.set(scope, [...words.get(scope) ?? [], tool]);
    }
    meanings.set(own, `use the tools of ${upstream.title}`);
    for (const [scope, tools] of words) {
      meanings.set(scope, `use ${tools.join(", ")} of ${upstream.title}`);
    }
    if (upstream.ownerOnly) { for (const scope of [own, ...words.keys()]) ownerOnly.add(scope); }
  }
  const supported = Object.freeze([...meanings.keys()]);
  const resource = Object.freeze(supported.filter((scope) => scope !== "offline_access"));
  return { meanings, ownerOnly, supported, resource };
}

/** The catalogue of a service without upstreams: the spec's scopes alone. */
export const SPEC_SCOPES: ScopeCatalogue = createScopeCatalogue({ upstreams: [] });

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(" ");
}
