/**
 * Refresh-token records. Opaque tokens, stored under their hash. A record is `current`
 * until used once; then `rotated`, keeping the answer it produced sealed under a key
 * derived from the token itself, so a retry within the window gets the identical answer
 * and nobody reading the store can read it.
 */
import type { Key, Mutation } from "../store/store.ts";
import { hashSecret, randomSecret, type SealedBox } from "../secrets.ts";

export type RefreshRecord =
  | { readonly state: "current"; readonly gid: string; readonly clientId: string }
  | {
    readonly state: "rotated";
    readonly gid: string;
    readonly clientId: string;
    readonly rotatedAt: number;
    readonly answer: SealedBox;
  };

export const refreshKey = (hash: string): Key => ["oauth", "refresh", hash];

/** HKDF `info` of the sealed answer. */
export const REFRESH_ANSWER_PURPOSE = "vestibule refresh answer v1";

export async function newRefreshToken(
  grant: { readonly id: string; readonly clientId: string },
  expireIn: number,
): Promise<{ token: string; mutation: Mutation }> {
  const token = randomSecret(32);
  const record: RefreshRecord = { state: "current", gid: grant.id, clientId: grant.clientId };
  return {
    token,
    mutation: {
      type: "set",
      key: refreshKey(await hashSecret(token)),
      value: record,
      expireIn: Math.max(1, expireIn),
    },
  };
}
