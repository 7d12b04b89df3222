import type { Clock } from '@oncely/core/adapter';

/** Options of `TypeOrmIdempotencyRecordStore`. */
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
  /**
   * Deletes expired records on a timer, from the store's `start()` (which the engine runs at
   * start-up) until its `close()`. Off by default: without it the table only grows unless you
   * call `purgeExpired` yourself.
   */
  readonly purge?: PurgeScheduleOptions;
}

/** How often, and in what batches, the store purges expired records by itself. */
export interface PurgeScheduleOptions {
  /**
   * Mean pause between two purges (ms). Each pause is drawn anew between half and one and a half
   * times this, so nodes started together do not purge together.
   */
  readonly every: number;
  /**
   * Records deleted per statement (at most 10 000). A purge deletes batches until one comes back
   * short, so a backlog is worked off in short statements rather than one long one.
   */
  readonly batch: number;
  /**
   * Gets a purge's failure; the schedule carries on and the next purge tries again. Default: a
   * process warning of type `OncelyPurgeWarning` (printed by Node, or seen with
   * `process.on('warning')`).
   */
  readonly onError?: (error: unknown) => void;
}

/** The SQL isolation levels a transactional route may ask for. */
export type TransactionIsolationLevel =
  'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

/** Options of `TypeOrmIdempotencyRecordStore.runInTransaction`. */
export interface RunInTransactionOptions {
  /** Isolation level of the transaction; the DataSource's default when omitted. */
  readonly isolationLevel?: TransactionIsolationLevel;
}
