// Shared set-up for the workspace unit tests: a :memory: store, real accounts, a clock
// the test moves, and a mailer that records what it sent.
import type { UpstreamCalls } from "../../src/workspace/domain/gate_actions.ts";
import type { Mail, Mailer } from "../../src/mail/mailer.ts";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createMailService } from "../../src/mail/mail_outbox.ts";
import type { NewAuditEntry } from "../../src/workspace/domain/audit.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import {
  createWorkspaceServices,
  type WorkspaceServices,
} from "../../src/workspace/domain/services.ts";

export interface Fixture extends WorkspaceServices {
  readonly clock: { t: number };
  readonly sent: Mail[];
  readonly ownerId: string;
  readonly memberId: string;
  readonly businessId: string;
  close(): void;
}

/** `transport`: where mail goes instead of `sent` (e.g. a mail server that refuses it). */
export async function createFixture(
  options: { transport?: Mailer; upstreams?: UpstreamCalls } = {},
): Promise<Fixture> {
  const clock = { t: Date.UTC(2026, 0, 1) };
  const now = () => clock.t;
  const store = await openKvStore(":memory:", now);
  const accounts = createAccounts(store, now);
  const sent: Mail[] = [];
  const services = createWorkspaceServices({
    store,
    now,
    accounts,
    // The real outbox, delivering to a list.
    mailer: createMailService({
      store,
      now,
      transport: options.transport ??
        { send: (mail) => Promise.resolve(void sent.push(mail)) },
      log: () => {},
    }).mailer,
    authUrl: "http://auth.test",
    ...(options.upstreams ? { upstreams: options.upstreams } : {}),
  });
  const { account, business } = await accounts.createAccountWithBusiness(
    "owner@example.com",
    "Acme",
  );
  const member = await accounts.addMember(business.id, "member@example.com", "member");
  return {
    ...services,
    clock,
    sent,
    ownerId: account.id,
    memberId: member.accountId,
    businessId: business.id,
    close: () => store.close(),
  };
}

/** An agent's audit entry of `action` in business "b", as an upstream call leaves one. */
export const auditEntry = (action: string): NewAuditEntry => ({
  businessId: "b",
  accountId: "a",
  actor: "agent",
  clientId: "c",
  action,
  summary: `Called ${action}`,
  gateId: null,
});
