import { OncelyError } from './oncely-error.js';

/**
 * An in-memory adapter holds as many live entries as its bound allows, and none of them may be
 * dropped: a live record or lease dropped would let a duplicate run, a quota count dropped would
 * let a tenant past its limit. So a new key is refused; nothing was started, and the request is
 * safe to retry once entries expire. Existing keys keep being answered (replays included). Maps
 * to a 503 with `Retry-After`.
 */
export class InMemoryCapacityError extends OncelyError {
  readonly code = 'in_memory_capacity_exceeded';

  constructor(
    /** The full adapter, e.g. `InMemoryIdempotencyRecordStore`. */
    readonly adapter: string,
    /** The option that bounds it, e.g. `maxRecords`. */
    readonly option: string,
    /** That option's value: the live entries, or the bytes of live entries, it holds. */
    readonly limit: number,
    /** Time until its first live entry expires, when a retry may find room; 0 if unknown. */
    readonly retryAfterMs: number,
    /** What `limit` counts: entries (`maxEntries`, `maxRecords`) or their bytes (`maxBytes`). */
    readonly unit: 'entries' | 'bytes' = 'entries',
  ) {
    super(
      `${adapter} holds ${unit === 'bytes' ? `${limit} bytes of live entries` : `${limit} live entries`} (its ${option}) and may drop none of them, so it cannot take a new key now. Raise ${option}, shorten the TTLs or retention that keep entries alive, or use a shared adapter (@oncely/redis, @oncely/typeorm) that keeps them outside the process.`,
    );
  }
}
