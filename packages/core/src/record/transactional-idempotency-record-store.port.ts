import type { IdempotencyRecordStore, RecordLease } from './idempotency-record-store.port.js';
import type { StoredResponse } from './stored-response.js';

/**
 * A record store that can confirm a record in the same database transaction as the work's own
 * writes: both commit, or neither does. `TTransaction` is the handle the work writes through
 * (a TypeORM `EntityManager` for `@oncely/typeorm`); a framework layer only passes it on.
 */
export interface TransactionalIdempotencyRecordStore<
  TTransaction = unknown,
> extends IdempotencyRecordStore {
  /**
   * Opens a transaction, checks that `lease` still holds its record, runs `work` with the
   * transaction, stores the `response` it returns with a fenced update and commits. Resolves to
   * the work's `result`.
   *
   * Throws `LeaseLostError` when the lease no longer holds the record, and rolls everything back:
   * nothing `work` wrote is committed. When `work` throws, the transaction rolls back, the error
   * is rethrown and the record stays in progress under `lease` (then `release` it, or `complete`
   * it with a response stored outside the transaction).
   */
  runInTransaction<T>(
    lease: RecordLease,
    work: (transaction: TTransaction) => Promise<TransactionalCompletion<T>>,
  ): Promise<T>;
}

/** What a transactional work returns: the response to store, and its own result to hand back. */
export interface TransactionalCompletion<T> {
  /** Stored on the record in the work's transaction, for replays. */
  readonly response: StoredResponse;
  /** What `runInTransaction` resolves to once the transaction committed. */
  readonly result: T;
}

/** Whether `store` can run work and confirmation in one transaction. */
export function isTransactionalRecordStore(
  store: IdempotencyRecordStore,
): store is TransactionalIdempotencyRecordStore {
  return (
    typeof (store as Partial<TransactionalIdempotencyRecordStore>).runInTransaction === 'function'
  );
}
