/**
 * The connect link an agent's URL elicitation carries (MCP "URL Mode Elicitation", Phishing): it
 * names the person whose agent asked, sealed with the vault's key and expiring, so the connect
 * page can refuse anyone else who opens it. The link of a tool error stays unbound (its words are
 * the same for every client), and the page needs a signed-in session either way.
 */
import type { Caller } from "../upstream_set.ts";
import { parseSealed, sealedText, type TokenVault, VaultError } from "./vault.ts";

/** How long an elicitation's link stays good: enough to sign in here and at the upstream. */
export const CONNECT_LINK_LIFETIME_MS = 60 * 60 * 1000;
/** The query parameter that carries the binding. */
export const BOUND_PARAM = "for";

export type LinkCheck = "ok" | "foreign" | "expired";

export interface ConnectLinks {
  /** `connectUrl` bound to the caller's account until CONNECT_LINK_LIFETIME_MS from now. */
  bound(connectUrl: string, upstream: string, caller: Caller): Promise<string>;
  /** Whether the binding of a link of `upstream` for the business is this account's and alive. */
  check(upstream: string, caller: Caller, binding: string): Promise<LinkCheck>;
}

interface Binding {
  readonly accountId: string;
  readonly expiresAt: number;
}

/** The upstream and business are the box's context: a binding moved to another link does not open. */
const _context = (upstream: string, businessId: string) =>
  `connect link\n${upstream}\n${businessId}`;

export function createConnectLinks(deps: {
  readonly vault: TokenVault;
  readonly now: () => number;
}): ConnectLinks {
  const { vault, now } = deps;
  return {
    async bound(connectUrl, upstream, caller) {
      const binding: Binding = {
        accountId: caller.accountId,
        expiresAt: now() + CONNECT_LINK_LIFETIME_MS,
      };
      const sealed = await vault.seal(
        _context(upstream, caller.businessId),
        JSON.stringify(binding),
      );
      return `${connectUrl}&${BOUND_PARAM}=${sealedText(sealed)}`;
    },
    async check(upstream, caller, text) {
      const sealed = parseSealed(text);
      if (sealed === null) return "foreign";
      let binding: Binding;
      try {
        binding = JSON.parse(await vault.open(_context(upstream, caller.businessId), sealed));
      } catch (error) {
        if (error instanceof VaultError) return "foreign";
        throw error;
      }
      if (binding.accountId !== caller.accountId) return "foreign";
      return now() < binding.expiresAt ? "ok" : "expired";
    },
  };
}
