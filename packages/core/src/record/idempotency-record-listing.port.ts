/** One live record as `IdempotencyRecordListing.listRecords` reports it (never its response). */
export interface RecordSummary {
  /** The record identity, `ns:op:ver:scope:target`. */
  readonly identity: string;
  /** SHA-256 hex of the identity, as the store indexes it. */
  readonly keyHash: string;
  /** Whether a request holds the record or the work completed. */
  readonly kind: 'in_progress' | 'completed';
  /** The claiming service, when the record carries one. */
  readonly owner?: string;
  /** When the store drops the record (lease end + retention for in progress, retention end when completed). */
  readonly expiresAt: Date;
}

/**
 * Operator listing and deletion of durable records by operation, next to
 * `IdempotencyRecordAdmin`. Implemented by the in-memory store, `RedisIdempotencyRecordAdmin`
 * (`@oncely/redis`) and `TypeOrmIdempotencyRecordAdmin` (`@oncely/typeorm`); use it through
 * `OncelyAdmin`.
 */
export interface IdempotencyRecordListing {
  /** Live records of `operation` (`ns:op:ver`, or `ns:op` for all versions), in no particular order; on Redis a SCAN of every master, never KEYS. */
  listRecords(
    operation: string,
    options?: { readonly batchSize?: number },
  ): AsyncIterable<RecordSummary>;
  /** Deletes the record of `identity` whatever its state (the next request runs again) and tells every process to drop its near-cached copy; false when there was none. */
  deleteRecord(identity: string): Promise<boolean>;
}

/** Whether `admin` also offers the listing methods. */
export function isIdempotencyRecordListing(admin: object): admin is IdempotencyRecordListing {
  const candidate = admin as Partial<IdempotencyRecordListing>;
  return (
    typeof candidate.listRecords === 'function' && typeof candidate.deleteRecord === 'function'
  );
}
