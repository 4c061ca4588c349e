/**
 * A Map that holds at most `maxEntries`, forgetting the least recently written entry first
 * (a Map iterates in insertion order, and `set` re-inserts). The one bounded cache of the
 * server: what strangers choose the keys of (tokens, client addresses, client_id URLs) can
 * never grow memory without limit, and a forgotten entry is only worked out again.
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Stores `value` as the newest entry, forgetting the oldest one past the bound. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}
