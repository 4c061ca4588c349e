/**
 * The agent connection test (spec §2, §5 `app.access`): an attempt per business and client
 * that the agent creates and then verifies by its exact id. It proves the token, the
 * business and the tool round trip work without starting anything that costs money.
 */
import * as v from "valibot";
import type { Key, Store } from "../../store/store.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";

/** How long a pending attempt can be verified. */
export const ATTEMPT_TTL_MS = 15 * 60_000;

export const AttemptSchema = v.object({
  id: v.string(),
  businessId: v.string(),
  clientId: v.string(),
  accountId: v.string(),
  status: v.picklist(["pending", "verified"]),
  createdAt: v.number(),
  expiresAt: v.number(),
  verifiedAt: v.nullable(v.number()),
});
export type Attempt = v.InferOutput<typeof AttemptSchema>;

export interface AttemptOwner {
  readonly businessId: string;
  readonly clientId: string;
  readonly accountId: string;
}

export type VerifyOutcome =
  | { readonly ok: true; readonly attempt: Attempt }
  | { readonly ok: false; readonly reason: string };

export interface ConnectionTests {
  /**
   * The current verified attempt when there is one and `restart` is false; otherwise a new
   * pending attempt that supersedes the previous one.
   */
  start(owner: AttemptOwner, restart: boolean): Promise<{ attempt: Attempt; created: boolean }>;
  verify(owner: AttemptOwner, attemptId: string): Promise<VerifyOutcome>;
  /** Every client's current attempt in a business, for the account page. */
  statuses(businessId: string): Promise<Attempt[]>;
}

const _attemptKey = (id: string) => ["conntest", id];
/** The connection-test attempts of a business; their pointers lie under `["ws", businessId]`. */
export async function attemptKeysOf(store: Store, businessId: string): Promise<Key[]> {
  const keys: Key[] = [];
  for await (const pointer of store.list<string>(["ws", businessId, "conntest_current"])) {
    keys.push(_attemptKey(pointer.value));
  }
  return keys;
}

const _currentKey = (businessId: string, clientId: string) => [
  "ws",
  businessId,
  "conntest_current",
  clientId,
];

export function createConnectionTests(store: Store, now: () => number): ConnectionTests {
  const current = async (businessId: string, clientId: string) => {
    const pointer = await store.get<string>(_currentKey(businessId, clientId));
    if (!pointer) return { pointer, attempt: null };
    const attempt = await store.get<Attempt>(_attemptKey(pointer.value));
    return { pointer, attempt };
  };
  return {
    start(owner, restart) {
      return retryCommit(async () => {
        const { pointer, attempt } = await current(owner.businessId, owner.clientId);
        if (!restart && attempt?.value.status === "verified") {
          return { attempt: attempt.value, created: false };
        }
        const at = now();
        const fresh: Attempt = {
          id: crypto.randomUUID(),
          businessId: owner.businessId,
          clientId: owner.clientId,
          accountId: owner.accountId,
          status: "pending",
          createdAt: at,
          expiresAt: at + ATTEMPT_TTL_MS,
          verifiedAt: null,
        };
        // The pointer's version check makes two concurrent restarts leave exactly one current.
        const ok = await store.commit(
          [{
            key: _currentKey(owner.businessId, owner.clientId),
            version: pointer?.version ?? null,
          }],
          [
            { type: "set", key: _attemptKey(fresh.id), value: fresh },
            { type: "set", key: _currentKey(owner.businessId, owner.clientId), value: fresh.id },
          ],
        );
        return ok ? { attempt: fresh, created: true } : RETRY;
      });
    },

    verify(owner, attemptId) {
      return retryCommit(async () => {
        const entry = await store.get<Attempt>(_attemptKey(attemptId));
        const attempt = entry?.value;
        if (
          !entry || !attempt || attempt.businessId !== owner.businessId ||
          attempt.clientId !== owner.clientId
        ) {
          return {
            ok: false,
            reason:
              `No connection test attempt ${attemptId} was started by this client for this business; call get_agent_connection_setup to start one`,
          };
        }
        const { pointer } = await current(owner.businessId, owner.clientId);
        if (pointer?.value !== attemptId) {
          return {
            ok: false,
            reason:
              `Connection test attempt ${attemptId} was superseded by a newer attempt; verify the attemptId that get_agent_connection_setup returned last`,
          };
        }
        if (attempt.status === "verified") return { ok: true, attempt };
        if (now() >= attempt.expiresAt) {
          return {
            ok: false,
            reason: `Connection test attempt ${attemptId} expired at ${
              new Date(attempt.expiresAt).toISOString()
            }; call get_agent_connection_setup to start a new one`,
          };
        }
        const verified: Attempt = { ...attempt, status: "verified", verifiedAt: now() };
        const ok = await store.commit(
          [{ key: _attemptKey(attemptId), version: entry.version }],
          [{ type: "set", key: _attemptKey(attemptId), value: verified }],
        );
        return ok ? { ok: true, attempt: verified } : RETRY;
      });
    },

    async statuses(businessId) {
      const attempts: Attempt[] = [];
      for await (const pointer of store.list<string>(["ws", businessId, "conntest_current"])) {
        const attempt = await store.get<Attempt>(_attemptKey(pointer.value));
        if (attempt) attempts.push(attempt.value);
      }
      return attempts;
    },
  };
}
