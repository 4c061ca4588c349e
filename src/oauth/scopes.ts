/**
 * The scopes of spec §5 with their meanings in the spec's own words, and which of them only
 * a business owner can grant.
 */
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

/**
 * The scopes the workspace resource names (protected-resource `scopes_supported`, challenge
 * `scope`): every scope but offline_access, which asks the authorization server for refresh
 * tokens and is no requirement of the resource (MCP 2026-07-28 "Refresh Tokens": resource
 * servers SHOULD NOT name it; clients add it themselves from the authorization server's
 * metadata).
 */
export const RESOURCE_SCOPES: readonly Scope[] = Object.freeze(
  SUPPORTED_SCOPES.filter((scope) => scope !== "offline_access"),
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

export type ScopeParse = { ok: true; scopes: Scope[] } | { ok: false; unknown: string };

/**
 * Parses a space-delimited `scope` (RFC 6749 §3.3) into known scopes in catalogue order,
 * without duplicates; the first unknown one is reported.
 */
export function parseScope(value: string): ScopeParse {
  const wanted = new Set<string>();
  for (const part of value.split(" ")) if (part !== "") wanted.add(part);
  for (const scope of wanted) if (!isScope(scope)) return { ok: false, unknown: scope };
  return { ok: true, scopes: SUPPORTED_SCOPES.filter((s) => wanted.has(s)) };
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(" ");
}
