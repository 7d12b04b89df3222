/** Options of `RedisFlightCoordinator`. */
export interface RedisFlightCoordinatorOptions {
  /**
   * Prefix of every key and of the notice channel; default `oncely:`. Must not contain braces
   * (they would become the cluster hash tag). Coordinators share flights only if their prefixes
   * are equal.
   */
  readonly keyPrefix?: string;
  /**
   * Longest wait, in ms, for one Redis round trip (including a connection attempt in progress)
   * before the call fails with `CoordinatorUnavailableError`; default 1000.
   */
  readonly commandTimeout?: number;
  /**
   * Serves cached outcomes (results and deterministic errors) this process has already seen
   * from memory, without a round trip, until their Redis key expires; dropped when an operator
   * evicts one (`evictResult`) and flushed whenever the notice subscription is down. Default
   * `{ maxEntries: 10_000 }`; `false` sends every `acquire` to Redis. Always off on a Redis
   * Cluster client, whose subscriber connection can change without an event telling that
   * notices may have been lost.
   */
  readonly nearCache?: RedisFlightNearCacheOptions | false;
}

/** Options of the near cache of `RedisFlightCoordinator`. */
export interface RedisFlightNearCacheOptions {
  /** Most outcomes held; the least recently used goes first. Default 10 000. */
  readonly maxEntries?: number;
  /**
   * Most payload characters held over all outcomes (about their bytes, for ASCII payloads such
   * as JSON); the least recently used go first, and a larger single outcome is not kept.
   * Default 32 Mi (33 554 432).
   */
  readonly maxChars?: number;
}
