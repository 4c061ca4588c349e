/**
 * The workspace's URL elicitation keeping (src/mcp/elicitation.ts): the modes a 2025-11-25 client
 * declared, and the requestState of a 2026-07-28 `input_required` answer. It lives with the
 * connections, whose vault key seals the state, so the workspace never reaches up to the gateway.
 *
 * The workspace keeps no MCP session, so a client's `initialize` and its calls are separate
 * requests: what it declared is kept per token grant and client (a new `initialize` replaces it;
 * unused, it is forgotten after MODES_KEPT_MS).
 *
 * A requestState is sealed with the vault's key (AES-GCM: nobody can read or alter it) and names
 * the person, business, client and grant, the tool, the SHA-256 of its arguments, an expiry and a
 * nonce. It is used up (its nonce stored until it expires) only once everything else checks out,
 * so a state refused for any reason is still good for the call it was made for.
 */
import { canonicalSha256 } from "../../canonical_json.ts";
import { parseSealed, sealedText, type TokenVault, VaultError } from "./vault.ts";
import type { UrlElicitations } from "../../mcp/elicitation.ts";
import { randomSecret } from "../../secrets.ts";
import type { Store } from "../../store/store.ts";
import type { WorkspaceAuth } from "../../workspace/mcp/bearer.ts";

/** How long a client's declared elicitation modes are kept after its last `initialize`. */
export const MODES_KEPT_MS = 30 * 24 * 60 * 60 * 1000;
/** How long a retry may come after the person was asked: enough to sign in twice. */
export const REQUEST_STATE_LIFETIME_MS = 60 * 60 * 1000;

const STATE_CONTEXT = "mcp request state";

interface RequestState {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly grantId: string;
  readonly tool: string;
  readonly argumentsSha256: string;
  readonly expiresAt: number;
  readonly nonce: string;
}

const modesKey = (auth: WorkspaceAuth) => ["elicitation_modes", auth.grantId, auth.clientId];
const usedKey = (nonce: string) => ["request_state_used", nonce];

export function createWorkspaceElicitations(deps: {
  readonly store: Store;
  readonly vault: TokenVault;
  readonly now: () => number;
}): UrlElicitations<WorkspaceAuth> {
  const { store, vault, now } = deps;

  const opened = async (text: string): Promise<RequestState | null> => {
    const sealed = parseSealed(text);
    if (sealed === null) return null;
    try {
      return JSON.parse(await vault.open(STATE_CONTEXT, sealed)) as RequestState;
    } catch (error) {
      if (error instanceof VaultError) return null;
      throw error;
    }
  };

  return {
    async remember(auth, url) {
      if (url) await store.set(modesKey(auth), { url: true }, { expireIn: MODES_KEPT_MS });
      else await store.delete(modesKey(auth));
    },
    async declared(auth) {
      return (await store.get(modesKey(auth))) !== null;
    },
    async issue(auth, call) {
      const state: RequestState = {
        accountId: auth.accountId,
        businessId: auth.businessId,
        clientId: auth.clientId,
        grantId: auth.grantId,
        tool: call.name,
        argumentsSha256: canonicalSha256(call.arguments),
        expiresAt: now() + REQUEST_STATE_LIFETIME_MS,
        nonce: randomSecret(16),
      };
      return sealedText(await vault.seal(STATE_CONTEXT, JSON.stringify(state)));
    },
    async redeem(auth, call, text) {
      const state = await opened(text);
      if (state === null) return "is not one this server issued (it was altered or is not ours)";
      const mine = state.accountId === auth.accountId && state.businessId === auth.businessId &&
        state.clientId === auth.clientId && state.grantId === auth.grantId;
      if (!mine) return "was issued to another caller";
      if (state.tool !== call.name || state.argumentsSha256 !== canonicalSha256(call.arguments)) {
        return "was issued for another call: retry with the same tool and arguments";
      }
      const left = state.expiresAt - now();
      if (left <= 0) return "has expired: call again without it";
      const key = usedKey(state.nonce);
      const fresh = await store.commit([{ key, version: null }], [
        { type: "set", key, value: true, expireIn: left },
      ]);
      return fresh ? null : "was already used: call again without it";
    },
  };
}
