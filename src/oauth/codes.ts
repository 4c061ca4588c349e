/**
 * Authorization codes: single-use, 60 seconds, stored under their hash and bound to
 * everything the consent decided. A used code is remembered (as `used`, naming the grant
 * it created) so that a replay can revoke that grant.
 */
import type { Key, Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";
import { hashSecret, randomSecret } from "../secrets.ts";

export interface CodeBinding {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly accountId: string;
  readonly businessId: string;
  readonly nonce: string | null;
  readonly authTime: number;
}

export type CodeRecord =
  | ({ readonly state: "issued" } & CodeBinding)
  | { readonly state: "used"; readonly gid: string };

export const codeKey = (hash: string): Key => ["oauth", "code", hash];

export async function issueCode(store: Store, binding: CodeBinding): Promise<string> {
  const code = randomSecret(32);
  const record: CodeRecord = { state: "issued", ...binding };
  await store.set(codeKey(await hashSecret(code)), record, { expireIn: LIFETIMES.code });
  return code;
}
