/**
 * The workspace domain, built once by app.ts and shared by the {api_url} site (the MCP tools)
 * and the {auth_url} site (approvals, the account page's section).
 */
import { type EventOutbox, NO_EVENTS } from "../../events/event_outbox.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Accounts } from "../../accounts/model.ts";
import type { Store } from "../../store/store.ts";
import { type AuditLog, createAuditLog } from "./audit.ts";
import { type ConnectionTests, createConnectionTests } from "./connection_tests.ts";
import { type Conversations, createConversations } from "./conversations.ts";
import { NO_UPSTREAM_CALLS, type UpstreamCalls } from "./gate_actions.ts";
import { createGates, type Gates } from "./gates.ts";
import { createDefinitionBatches, type DefinitionBatches } from "./definition_batches.ts";
import { createWorkspace, type Workspace } from "./workspace.ts";

export interface WorkspaceServicesDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly accounts: Accounts;
  readonly mailer: MailOutbox;
  /** None when left out (no VESTIBULE_WEBHOOK_URL). */
  readonly events?: EventOutbox;
  readonly authUrl: string;
  /** The gateway's upstreams, for approved upstream calls; none when left out. */
  readonly upstreams?: UpstreamCalls;
}

export interface WorkspaceServices {
  readonly accounts: Accounts;
  readonly now: () => number;
  readonly workspace: Workspace;
  readonly audit: AuditLog;
  readonly gates: Gates;
  /** Upstream tool changes held under one gate each (definition_batches.ts). */
  readonly definitionBatches: DefinitionBatches;
  readonly connectionTests: ConnectionTests;
  readonly conversations: Conversations;
  readonly mailer: MailOutbox;
  readonly events: EventOutbox;
}

export function createWorkspaceServices(deps: WorkspaceServicesDeps): WorkspaceServices {
  const { store, now, accounts, mailer } = deps;
  const events = deps.events ?? NO_EVENTS;
  const workspace = createWorkspace(store);
  const audit = createAuditLog(store, now);
  const upstreams = deps.upstreams ?? NO_UPSTREAM_CALLS;
  const gates = createGates({
    store,
    now,
    accounts,
    workspace,
    audit,
    mailer,
    events,
    authUrl: deps.authUrl,
    upstreams,
  });
  return {
    accounts,
    now,
    workspace,
    audit,
    gates,
    definitionBatches: createDefinitionBatches({
      store,
      pins: workspace.upstreamPins,
      upstreams,
      gate: gates.get,
      now,
    }),
    connectionTests: createConnectionTests(store, now),
    conversations: createConversations(store, now),
    mailer,
    events,
  };
}
