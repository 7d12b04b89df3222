import { InvalidRedisOptionError } from './invalid-redis-option.error.js';

/**
 * The bounds of a near cache (`RedisIdempotencyRecordStore` and `RedisFlightCoordinator`): the
 * least recently used entries go once either is reached, and an entry larger than `maxBytes`
 * alone is not kept.
 */
export interface RedisNearCacheOptions {
  /** Most entries held. Default 10 000. */
  readonly maxEntries?: number;
  /**
   * Most bytes held over all entries (default 64 MiB), counted from what an entry already holds:
   * bytes as stored, two per character of text (the most a string takes in V8), and 256 per
   * entry for its objects.
   */
  readonly maxBytes?: number;
}

/** Default of `maxEntries`. */
export const DEFAULT_NEAR_CACHE_ENTRIES = 10_000;

/**
 * Default of `maxBytes`: 64 MiB. A near cache only saves round trips to Redis, which still holds
 * every entry, so it gets a small share of a server's heap; the entries bound alone let 10 000
 * responses of 1 MiB hold some 10 GiB.
 */
export const DEFAULT_NEAR_CACHE_BYTES = 64 * 1024 * 1024;

/** A near cache's bounds, or `undefined` when it is off; refuses bounds that are not. */
export function nearCacheBoundsOf(
  option: RedisNearCacheOptions | false | undefined,
): Required<RedisNearCacheOptions> | undefined {
  if (option === false) return undefined;
  const bounds = {
    maxEntries: option?.maxEntries ?? DEFAULT_NEAR_CACHE_ENTRIES,
    maxBytes: option?.maxBytes ?? DEFAULT_NEAR_CACHE_BYTES,
  };
  for (const [name, value] of Object.entries(bounds)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidRedisOptionError(
        `nearCache.${name}`,
        `expected a positive integer, got ${value}; pass nearCache: false to turn the near cache off.`,
      );
    }
  }
  return bounds;
}
