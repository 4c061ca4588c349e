/**
 * Step-up demands: a resource that refused a token with `insufficient_scope` notes the scopes
 * it asked for against the token's grant; the grant's next refresh takes the note and is
 * refused (`invalid_grant`), since no refresh can add a scope only the person can grant.
 *
 * Why: the MCP SDK v1 client answers that 403 by refreshing without asking for the new scope.
 * A refresh that succeeded would hand it the same scopes, the same 403, and it would give up
 * without ever showing the person the consent page. Refused, it drops its tokens and starts an
 * authorization request with the challenged scopes, which reaches the person. The refresh
 * token is left as it was (nothing was issued, so nothing rotated), the grant is untouched, and
 * a note is taken once: a client that keeps its tokens refreshes normally the next time.
 */
import type { Key, Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";

interface StepUpRecord {
  readonly scopes: readonly string[];
  readonly at: number;
}

const stepUpKey = (gid: string): Key => ["oauth", "step_up", gid];

/** Called by the resource with each insufficient_scope challenge it sends for a grant's token. */
export async function noteStepUp(
  store: Store,
  gid: string,
  scopes: readonly string[],
  now: number,
): Promise<void> {
  const record: StepUpRecord = { scopes: [...scopes], at: now };
  await store.set(stepUpKey(gid), record, { expireIn: LIFETIMES.stepUp });
}

/**
 * The scopes a resource demanded of the grant within the last minute that it does not hold,
 * taken (deleted) so that one demand refuses one refresh; empty when there is none.
 */
export async function takeStepUp(
  store: Store,
  grant: { readonly id: string; readonly scopes: readonly string[] },
  now: number,
): Promise<string[]> {
  const entry = await store.get<StepUpRecord>(stepUpKey(grant.id));
  if (!entry) return [];
  // Of two refreshes at once, only the one that deletes the note is refused.
  if (
    !await store.commit([{ key: entry.key, version: entry.version }], [{
      type: "delete",
      key: entry.key,
    }])
  ) {
    return [];
  }
  if (now - entry.value.at > LIFETIMES.stepUp) return [];
  return entry.value.scopes.filter((scope) => !grant.scopes.includes(scope));
}
