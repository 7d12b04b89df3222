import type { Clock } from '@oncely/core/adapter';

export interface TypeOrmIdempotencyRecordStoreOptions {
  /**
   * Time source for leases and retention (default: the system clock). Every node compares its
   * own clock with times other nodes wrote, so keep nodes NTP-synchronised; skew only moves when
   * a lease counts as expired, never lets two holders confirm (the fence decides that).
   */
  readonly clock?: Clock;
  /**
   * How long (ms) one operation keeps retrying a statement the database rolled back because of
   * a lock conflict: a deadlock victim, a serialization failure, or SQLite locked by another
   * connection. Default 10 000.
   */
  readonly conflictRetryMs?: number;
}

export type TransactionIsolationLevel =
  'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

export interface RunInTransactionOptions {
  /** Isolation level of the transaction; the DataSource's default when omitted. */
  readonly isolationLevel?: TransactionIsolationLevel;
}
