/**
 * What the business's own systems report through the operator API (issue 11, "status and
 * records in"): a run's status, result and cost, a connection's state, and the whole catalogue
 * of workflows, triggers, packs and billing records (catalogue_replacement.ts). The bodies are
 * parsed by the schemas of operator_bodies.ts, every change is one store commit with its audit
 * entry (actor `operator`, planned_commits.ts), and what the agents read is then what those
 * systems said, stamped `updatedAt`.
 */
import type { Accounts } from "../accounts/model.ts";
import type { Store } from "../store/store.ts";
import { type AuditLog, operatorEntry } from "../workspace/domain/audit.ts";
import { type Connection, money, type Run } from "../workspace/domain/records.ts";
import type { Workspace } from "../workspace/domain/workspace.ts";
import { catalogueProblem, planCatalogue } from "./catalogue_replacement.ts";
import type {
  Catalogue,
  CatalogueInput,
  ConnectionUpdate,
  Outcome,
  Refusal,
  RunUpdate,
} from "./operator_bodies.ts";
import { commitPlanned, notFound, replaced } from "./planned_commits.ts";

export interface OperatorUpdates {
  getRun(businessId: string, runId: string): Promise<Outcome<Run>>;
  updateRun(businessId: string, runId: string, update: RunUpdate): Promise<Outcome<Run>>;
  updateConnection(
    businessId: string,
    connectionId: string,
    update: ConnectionUpdate,
  ): Promise<Outcome<Connection>>;
  replaceCatalogue(businessId: string, catalogue: CatalogueInput): Promise<Outcome<Catalogue>>;
}

export interface OperatorUpdatesDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly accounts: Pick<Accounts, "getBusiness">;
  readonly workspace: Workspace;
  readonly audit: AuditLog;
}

const FINAL: ReadonlySet<Run["status"]> = new Set(["succeeded", "failed"]);

export function createOperatorUpdates(deps: OperatorUpdatesDeps): OperatorUpdates {
  const { store, now, accounts, workspace, audit } = deps;

  /** The operator's audit entry of a change (no account: the business's systems made it). */
  const audited = (businessId: string, action: string, summary: string, gateId: string | null) =>
    audit.entry(operatorEntry(businessId, null, action, summary, gateId));

  const noBusiness = async (businessId: string): Promise<Refusal | null> =>
    await accounts.getBusiness(businessId) === null
      ? notFound(`no business "${businessId}"`)
      : null;

  /**
   * One replacement at a time per business in this process; each applies whole, in turn. Across
   * processes the catalogue mark serialises them: each commit checks the version it read.
   */
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(businessId: string, run: () => Promise<T>): Promise<T> => {
    const result = (turns.get(businessId) ?? Promise.resolve()).then(run);
    const settled = result.then(() => {}, () => {});
    turns.set(businessId, settled);
    settled.then(() => {
      if (turns.get(businessId) === settled) turns.delete(businessId);
    });
    return result;
  };

  const updates: OperatorUpdates = {
    async getRun(businessId, runId) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      const run = await workspace.runs.get(businessId, runId);
      return run
        ? { ok: true, value: run.value }
        : notFound(`no workflow run "${runId}" in business "${businessId}"`);
    },

    async updateRun(businessId, runId, update) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      return await commitPlanned(store, async () => {
        const entry = await workspace.runs.get(businessId, runId);
        if (!entry) return notFound(`no workflow run "${runId}" in business "${businessId}"`);
        const run = entry.value;
        if (FINAL.has(run.status)) {
          // A repeated final report (a retry after a lost answer) is answered as it was.
          const same = update.status === run.status &&
            (update.result === undefined || update.result === run.result) &&
            (update.costCents === undefined || update.costCents === run.costCents);
          if (same) return { ok: true, value: { unchanged: run } };
          return {
            ok: false,
            status: 409,
            error: "conflict",
            message:
              `workflow run "${runId}" already ${run.status}: a finished run does not change`,
          };
        }
        const at = now();
        const next: Run = {
          ...run,
          status: update.status,
          finishedAt: FINAL.has(update.status) ? at : null,
          result: update.result ?? run.result,
          costCents: update.costCents ?? run.costCents,
          updatedAt: at,
        };
        const details = [
          `${run.status} → ${next.status}`,
          update.costCents !== undefined && `cost ${money(update.costCents)}`,
          update.result !== undefined && "result recorded",
        ].filter((d): d is string => typeof d === "string");
        const summary = `Workflow run ${runId} of ${run.workflowId}: ${details.join("; ")}`;
        return replaced(entry, next, audited(businessId, "updateWorkflowRun", summary, run.gateId));
      });
    },

    async updateConnection(businessId, connectionId, update) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      return await commitPlanned(store, async () => {
        const entry = await workspace.connections.get(businessId, connectionId);
        if (!entry) {
          return notFound(`no connection "${connectionId}" in business "${businessId}"`);
        }
        const connection = entry.value;
        const next: Connection = {
          ...connection,
          status: update.status,
          label: update.label ?? connection.label,
          updatedAt: now(),
        };
        const relabelled = next.label === connection.label ? "" : `, now ${next.label}`;
        const summary = `Connection ${connectionId} (${connection.service}, ${connection.label}` +
          `${relabelled}): ${connection.status} → ${next.status}`;
        return replaced(entry, next, audited(businessId, "updateConnection", summary, null));
      });
    },

    async replaceCatalogue(businessId, input) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      const invalid = catalogueProblem(input);
      if (invalid) return { ok: false, status: 400, error: "invalid_request", message: invalid };
      return await inTurn(
        businessId,
        () => commitPlanned(store, () => planCatalogue(deps, businessId, input)),
      );
    },
  };

  return updates;
}
