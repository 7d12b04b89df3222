import type { RedisNearCacheOptions } from '../connection/near-cache-bounds.js';

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
   * evicts one (`evictResult`) and flushed whenever the notice subscription is down. Bounded by
   * `maxEntries` (default 10 000) and `maxBytes` (default 64 MiB, a payload counting two bytes
   * per character); `false` sends every `acquire` to Redis. Always off on a Redis Cluster
   * client, whose subscriber connection can change without an event telling that notices may
   * have been lost.
   */
  readonly nearCache?: RedisNearCacheOptions | false;
}
