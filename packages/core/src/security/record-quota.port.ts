/**
 * Counters for `QuotaLimitedIdempotencyRecordStore`: which record identities a scope created in a
 * fixed window. An identity counts once per window, so a retry of a request whose record was
 * released (a 5xx, a lost lease) is never refused for the quota it already holds.
 * Implementations: `InMemoryRecordQuota` (one process) and `RedisRecordQuota` in `@oncely/redis`
 * (shared by every process). Durations are milliseconds.
 */
export interface RecordQuota {
  /**
   * Counts `identity` for `scope` in the current window, unless it is counted there already
   * (`already_counted`) or `limit` identities are (`exceeded`).
   */
  take(scope: string, identity: string, limit: number, windowMs: number): Promise<QuotaDecision>;

  /** Uncounts an identity `take` counted in `window` whose record was not created after all. */
  giveBack(scope: string, identity: string, window: number): Promise<void>;
}

/** What `RecordQuota.take` decided. */
export type QuotaDecision =
  | {
      /** The identity is counted now; the record may be created. */
      readonly kind: 'counted';
      /** Start of the window it is counted in, for `giveBack`. */
      readonly window: number;
    }
  | {
      /** The identity was counted in this window already (a retry); it costs nothing more. */
      readonly kind: 'already_counted';
    }
  | {
      /** The scope holds `limit` identities in this window. */
      readonly kind: 'exceeded';
      /** Time until the next window. */
      readonly retryAfterMs: number;
    };
