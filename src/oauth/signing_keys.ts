/**
 * ES256 signing keys kept in the store: one generated on first start, rotated on demand.
 * A retired key stays published (and usable for verification) until every token it signed
 * has expired, then disappears with its record's expiry.
 */
import type { JWK, JWTHeaderParameters } from "jose";
import * as errors from "jose/errors";
import { calculateJwkThumbprint } from "jose/jwk/thumbprint";
import { exportJWK } from "jose/key/export";
import { generateKeyPair } from "jose/key/generate/keypair";
import { importJWK } from "jose/key/import";
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import type { Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";

export interface StoredSigningKey {
  readonly kid: string;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
  readonly createdAt: number;
  /** Set when rotated out: no longer signs, verifies until then. */
  readonly retiresAt: number | null;
}

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
}

export interface SigningKeys {
  /** The key that signs now; created on first use when the store has none. */
  current(): Promise<SigningKey>;
  /** The public key of a published `kid`, or null. */
  publicKey(kid: string): Promise<CryptoKey | null>;
  /** The JWKS document: every key still published. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** Makes a new key current; the previous one retires after the access-token lifetime. */
  rotate(): Promise<{ kid: string; retired: string | null }>;
}

const CURRENT_KEY = ["oauth", "signing_current"] as const;
const keyOf = (kid: string) => ["oauth", "signing_key", kid] as const;
/**
 * How long this process trusts what it read of the keys: the current one, and each public key
 * with its retirement (a rotation by another process or the admin command shows within this).
 */
const CURRENT_TTL = 30_000;
/** Retired keys outlive the tokens they signed by this margin (clock skew). */
const RETIRE_MARGIN = 5 * 60 * 1000;

export function createSigningKeys(deps: { store: Store; now: () => number }): SigningKeys {
  const { store, now } = deps;
  let cached: { key: SigningKey; until: number } | null = null;
  const publicKeys = new Map<
    string,
    { key: CryptoKey; retiresAt: number | null; until: number }
  >();

  const load = (): Promise<SigningKey> =>
    retryCommit(async () => {
      const pointer = await store.get<{ kid: string }>(CURRENT_KEY);
      if (pointer) {
        const stored = await store.get<StoredSigningKey>(keyOf(pointer.value.kid));
        if (stored) {
          return {
            kid: stored.value.kid,
            privateKey: await importJWK(stored.value.privateJwk, "ES256") as CryptoKey,
          };
        }
      }
      const fresh = await _generate(now());
      const ok = await store.commit([{ key: CURRENT_KEY, version: pointer?.version ?? null }], [
        { type: "set", key: keyOf(fresh.kid), value: fresh },
        { type: "set", key: CURRENT_KEY, value: { kid: fresh.kid } },
      ]);
      if (ok) {
        return {
          kid: fresh.kid,
          privateKey: await importJWK(fresh.privateJwk, "ES256") as CryptoKey,
        };
      }
      return RETRY;
    }, {
      attempts: 3,
      exhausted: () => {
        throw new Error("Cannot establish a signing key: the store keeps changing");
      },
    });

  return {
    async current() {
      if (cached && cached.until > now()) return cached.key;
      const key = await load();
      cached = { key, until: now() + CURRENT_TTL };
      return key;
    },
    async publicKey(kid) {
      const at = now();
      const known = publicKeys.get(kid);
      if (known && known.until > at && (known.retiresAt === null || known.retiresAt > at)) {
        return known.key;
      }
      publicKeys.delete(kid);
      const stored = await store.get<StoredSigningKey>(keyOf(kid));
      if (!stored) return null;
      const key = await importJWK(stored.value.publicJwk, "ES256") as CryptoKey;
      publicKeys.set(kid, { key, retiresAt: stored.value.retiresAt, until: at + CURRENT_TTL });
      return key;
    },
    async jwks() {
      await this.current();
      const keys: JWK[] = [];
      for await (const entry of store.list<StoredSigningKey>(["oauth", "signing_key"])) {
        keys.push(entry.value.publicJwk);
      }
      return { keys };
    },
    rotate() {
      return retryCommit(async () => {
        const pointer = await store.get<{ kid: string }>(CURRENT_KEY);
        const fresh = await _generate(now());
        const mutations: Parameters<Store["commit"]>[1][number][] = [
          { type: "set", key: keyOf(fresh.kid), value: fresh },
          { type: "set", key: CURRENT_KEY, value: { kid: fresh.kid } },
        ];
        const old = pointer ? await store.get<StoredSigningKey>(keyOf(pointer.value.kid)) : null;
        if (old) {
          const lifetime = LIFETIMES.accessToken + RETIRE_MARGIN;
          mutations.push({
            type: "set",
            key: keyOf(old.value.kid),
            value: { ...old.value, retiresAt: now() + lifetime },
            expireIn: lifetime,
          });
        }
        const ok = await store.commit(
          [{ key: CURRENT_KEY, version: pointer?.version ?? null }],
          mutations,
        );
        if (ok) {
          cached = null;
          publicKeys.clear();
          return { kid: fresh.kid, retired: old?.value.kid ?? null };
        }
        return RETRY;
      }, {
        attempts: 3,
        exhausted: () => {
          throw new Error("Cannot rotate the signing key: the store keeps changing");
        },
      });
    },
  };
}

/**
 * jose's key resolver for tokens this server signed: the published key the header's `kid`
 * names (never a key the token carries), or JWKSNoMatchingKey.
 */
export function verificationKey(
  keys: SigningKeys,
): (header: JWTHeaderParameters) => Promise<CryptoKey> {
  return async (header) => {
    // A kid of another type is no key of ours, never a store key (the token chose it).
    const key = typeof header.kid === "string" ? await keys.publicKey(header.kid) : null;
    if (!key) throw new errors.JWKSNoMatchingKey("no published key has this kid");
    return key;
  };
}

async function _generate(createdAt: number): Promise<StoredSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    privateJwk: { ...await exportJWK(privateKey), kid, alg: "ES256" },
    publicJwk: { ...publicJwk, kid, alg: "ES256", use: "sig" },
    createdAt,
    retiresAt: null,
  };
}

/** The current key's id, or null when the store has none; creates nothing (admin check). */
export async function currentSigningKid(store: Store): Promise<string | null> {
  const pointer = await store.get<{ kid: string }>(CURRENT_KEY);
  if (!pointer) return null;
  return (await store.get<StoredSigningKey>(keyOf(pointer.value.kid))) ? pointer.value.kid : null;
}
