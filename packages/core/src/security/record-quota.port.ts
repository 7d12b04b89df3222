/**
 * Counters for `QuotaLimitedIdempotencyRecordStore`: how many records a scope created in a fixed
 * window. Implementations: `InMemoryRecordQuota` (one process) and `RedisRecordQuota` in
 * `@oncely/redis` (shared by every process). Durations are milliseconds.
 */
export interface RecordQuota {
  /** Counts one record for `scope` in the current window, unless `limit` is already reached. */
  take(scope: string, limit: number, windowMs: number): Promise<QuotaDecision>;

  /** Uncounts a record `take` counted in `window` that was not created after all. */
  giveBack(scope: string, window: number): Promise<void>;
}

export type QuotaDecision =
  | { readonly kind: 'taken'; readonly window: number }
  | { readonly kind: 'exceeded'; readonly retryAfterMs: number };
