import { randomUUID } from 'node:crypto';
import {
  LeaseLostError,
  type BeginOptions,
  type BeginOutcome,
  type ClaimRegistrySource,
  type RecordLease,
  type StoredResponse,
  type TransactionalCompletion,
  type TransactionalIdempotencyRecordStore,
} from '@oncely/core';
import {
  encodeStoredResponse,
  positiveWholeNumber,
  recordKeyHash,
  systemClock,
  type Clock,
  type EncodedResponse,
} from '@oncely/core/adapter';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { CallTransaction } from './call-transaction.js';
import { dataSourceAddress } from './data-source-address.js';
import { recordTableName } from './record-table.js';
import { TypeOrmClaimRegistry } from './typeorm-claim.registry.js';
import { guardTransactionalWrites } from './guard-transactional-writes.js';
import { discardIfSessionEnded, query, type StatementResult } from './record-connection.js';
import { isRetryableConflict, isUniqueViolation, recordDialectOf } from './record-dialect.js';
import { previousRecordsAnswer } from './previous-records.js';
import { maxPurgeBatch, PurgeSchedule, purgeScheduleOptions } from './purge-schedule.js';
import { liveAnswer, type RecordRow } from './record-row.js';
import type {
  RunInTransactionOptions,
  TypeOrmIdempotencyRecordStoreOptions,
} from './typeorm-idempotency-record-store.options.js';
import { UnguardedRecordConnection } from './unguarded-record-connection.js';
import { verifyRecordTable } from './verify-record-table.js';

/** Rounds `begin` may spend on a record that vanishes or changes hands between its statements. */
const maxBeginRounds = 8;

/**
 * Durable idempotency records in the service's own database through TypeORM (PostgreSQL,
 * MySQL/MariaDB, SQLite via better-sqlite3), in the `oncely_idempotency_record` table that
 * `CreateOncelySchema1796256000000` creates.
 *
 * `begin` inserts the record: the unique index on `key_hash` is the lock. `complete`, `release`
 * and `renew` are single statements conditional on owner token and fence, so a holder that lost
 * its lease changes nothing. `runInTransaction` confirms the record in the same transaction as
 * the work's own writes, and guards the DataSource so that the work cannot write anywhere else
 * by mistake (see `runInTransaction`).
 *
 * `start()` (run by the engine at start-up) refuses a table that is missing or not migrated,
 * and starts the `purge` schedule if one is configured; `close()` stops it.
 */
export class TypeOrmIdempotencyRecordStore
  implements TransactionalIdempotencyRecordStore<EntityManager>, ClaimRegistrySource
{
  private claims: TypeOrmClaimRegistry | undefined;
  private readonly clock: Clock;
  private readonly connection: UnguardedRecordConnection;
  private readonly purgeSchedule: PurgeSchedule | undefined;
  /**
   * The transactions of `runInTransaction` calls that hold their record row locked (PostgreSQL,
   * SQLite), by lease. Their renewals go through that transaction: on another connection a
   * renewal would wait for the lock until the work commits, and the watchdog would give up a
   * lease nobody can take. Through it, a renewal still fails once the transaction is gone (an
   * operator's force-release ends its session), so the lease is then lost as it should be.
   */
  private readonly rowLockingRunners = new Map<string, QueryRunner>();
  private starting: Promise<void> | undefined;

  /**
   * @param dataSource stays yours: the store never initialises or destroys it, not even in
   * `close()`. It is guarded with `guardTransactionalWrites` here, so build the store at start-up.
   */
  constructor(
    private readonly dataSource: DataSource,
    options: TypeOrmIdempotencyRecordStoreOptions = {},
  ) {
    recordDialectOf(dataSource.options.type);
    this.clock = options.clock ?? systemClock;
    this.connection = new UnguardedRecordConnection(
      dataSource,
      positiveWholeNumber('conflictRetryMs', options.conflictRetryMs ?? 10_000),
    );
    if (options.purge !== undefined) {
      this.purgeSchedule = new PurgeSchedule(
        (batchSize) => this.purgeExpired(batchSize),
        purgeScheduleOptions(options.purge),
      );
    }
    guardTransactionalWrites(dataSource);
  }

  /**
   * Checks that the DataSource is initialised and holds `oncely_idempotency_record` with every
   * column this version writes, then starts the `purge` schedule, if any. Rejects with
   * `RecordTableNotMigratedError` (naming the migration to run) or
   * `UninitializedDataSourceError`. The engine runs it once at start-up (the Nest module while
   * it boots, Express's `oncely.start()`); calling it again returns the same promise.
   */
  start(): Promise<void> {
    this.starting ??= (async () => {
      await verifyRecordTable(this.dataSource);
      this.purgeSchedule?.start();
    })();
    return this.starting;
  }

  /** What the start-up line says: `TypeORM postgres host:5432/db (table …)`, no password. */
  describe(): string {
    return `TypeORM ${dataSourceAddress(this.dataSource.options)} (table ${recordTableName})`;
  }

  /**
   * The registry the idempotency claims of the engine go to: this database's `oncely_claim`
   * table (`TypeOrmClaimRegistry`), on this store's DataSource and clock.
   */
  claimRegistry(): TypeOrmClaimRegistry {
    this.claims ??= new TypeOrmClaimRegistry(this.dataSource, { clock: this.clock });
    return this.claims;
  }

  /**
   * Stops the purge schedule, waiting for a running purge to finish. The DataSource stays open:
   * it is yours (or Nest's) to destroy, after this.
   */
  async close(): Promise<void> {
    await this.purgeSchedule?.stop();
  }

  /**
   * Inserts the record, or answers from the row already there. With `previousIdentities`, a claim
   * is followed by one read of the previous versions' rows (`previousRecordsAnswer`), and given
   * back when one of them answers.
   */
  async begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    const leaseTtlMs = positiveWholeNumber('leaseTtlMs', options.leaseTtlMs);
    const retentionMs = positiveWholeNumber('retentionMs', options.retentionMs);
    const claimed = await this.claim(identity, digest, leaseTtlMs, retentionMs, options);
    const previous = options.previousIdentities ?? [];
    if (claimed.kind !== 'acquired' || previous.length === 0) return claimed;
    let answer: BeginOutcome | undefined;
    try {
      answer = await previousRecordsAnswer(this.connection, previous, digest, options, () =>
        this.clock.now(),
      );
    } catch (error) {
      await this.release(claimed.lease).catch(() => undefined);
      throw error;
    }
    if (answer === undefined) return claimed;
    await this.release(claimed.lease);
    return answer;
  }

  /** The unique index is the lock: the row is inserted, or read and taken over once expired. */
  private async claim(
    identity: string,
    digest: string,
    leaseTtlMs: number,
    retentionMs: number,
    options: BeginOptions,
  ): Promise<BeginOutcome> {
    const { statements } = this.connection;
    const keyHash = recordKeyHash(identity);
    for (let round = 0; round < maxBeginRounds; round += 1) {
      const now = this.clock.now();
      const ownerToken = randomUUID();
      const leaseExpiresAt = now + leaseTtlMs;
      const lease = (fence: number): BeginOutcome => ({
        kind: 'acquired',
        lease: { identity, keyHash, ownerToken, fence, leaseExpiresAt: new Date(leaseExpiresAt) },
      });
      // The columns a new holder writes, in the order both `insert` and `takeOver` take them.
      const holder = [
        digest,
        ownerToken,
        leaseExpiresAt,
        retentionMs,
        now,
        leaseExpiresAt,
        options.owner ?? null,
      ];
      try {
        await this.connection.execute(statements.insert, [keyHash, identity, ...holder]);
        return lease(1);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }

      const [row] = (await this.connection.execute(statements.select, [keyHash]))
        .records as RecordRow[];
      if (!row) continue;
      const answer = liveAnswer(row, digest, now, options);
      if (answer) return answer;

      // Expired: an abandoned lease, or a completed record past its retention. Either way the
      // record counts as absent; taking the row over keeps the fence growing for this key.
      const fence = Number(row.fence);
      const taken = await this.connection.execute(statements.takeOver, [
        ...holder,
        keyHash,
        row.owner_token,
        fence,
        now,
      ]);
      if (taken.affected === 1) return lease(fence + 1);
    }
    // The row changed hands on every round: others are actively working on this identity.
    return { kind: 'in_progress', retryAfterMs: leaseTtlMs };
  }

  async complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    const { statements } = this.connection;
    const result = await this.connection.execute(
      statements.complete,
      completeParameters(lease, encodeStoredResponse(response), this.clock.now()),
    );
    if (result.affected !== 1) throw new LeaseLostError(lease.identity, lease.fence);
  }

  async release(lease: RecordLease): Promise<void> {
    const { statements } = this.connection;
    await this.connection.execute(statements.release, heldParameters(lease));
  }

  async renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    positiveWholeNumber('leaseTtlMs', leaseTtlMs);
    const { statements } = this.connection;
    const leaseExpiresAt = this.clock.now() + leaseTtlMs;
    const parameters = [leaseExpiresAt, leaseExpiresAt, ...heldParameters(lease)];
    const runner = this.rowLockingRunners.get(leaseLockKey(lease));
    if (runner) {
      const renewed = await query(runner, statements.renew, parameters).catch(() => undefined);
      return renewed?.affected === 1;
    }
    const result = await this.connection.execute(statements.renew, parameters);
    return result.affected === 1;
  }

  /**
   * Deletes up to `batchSize` (at most 10 000) expired records, oldest expiry first: one indexed
   * read of their ids, then one delete by primary key that re-checks expiry. Each statement is
   * short and locks only the rows it deletes, so call it often with small batches (hundreds)
   * rather than rarely with huge ones.
   */
  async purgeExpired(batchSize: number): Promise<number> {
    const limit = Math.min(positiveWholeNumber('batchSize', batchSize), maxPurgeBatch);
    const { statements } = this.connection;
    const now = this.clock.now();
    const expired = (await this.connection.execute(statements.selectExpired, [now, limit]))
      .records as {
      id: number | string;
    }[];
    if (expired.length === 0) return 0;
    const result = await this.connection.execute(statements.deleteExpired(expired.length), [
      ...expired.map(({ id }) => id),
      now,
    ]);
    return result.affected;
  }

  /**
   * Runs `work` and the confirmation of `lease` in one transaction: `work` writes through the
   * `EntityManager` it is given and returns the response to store with its own result; the
   * record is then completed with a fenced update and everything commits together. If the lease
   * no longer holds the record, `LeaseLostError` is thrown and nothing `work` wrote is committed.
   * If `work` throws, everything rolls back, the error is rethrown and the record stays in
   * progress under `lease`.
   *
   * While `work` runs, a write it sends on any other connection of a guarded DataSource (an
   * injected `Repository`, `dataSource.query()`, its own `dataSource.transaction()`) is refused
   * before it reaches the database, and the call then fails with `WriteOutsideTransactionError`
   * and rolls back, even if `work` caught the refusal. Reads stay allowed; `manager.transaction()`
   * nests in the call's transaction; `outsideIdempotencyTransaction()` lets a write through on
   * purpose. docs/transactions.md has what each database would do with such writes otherwise.
   *
   * The row is checked before `work` runs, so a lost lease costs no work. On PostgreSQL and
   * SQLite the check also locks it until commit: a takeover arriving while `work` runs waits and
   * then finds the record completed (it replays) instead of running the work a second time.
   * On MySQL/MariaDB the check does not lock, because InnoDB makes a duplicate `INSERT` wait for a
   * locked row, which would stall every concurrent `begin` for the whole transaction instead of
   * answering `in_progress`; a takeover during `work` then wins and this transaction rolls back.
   * Correctness never rests on that first check: the fenced update locks the row until commit,
   * so no takeover can slip in between the update and the commit on any database.
   *
   * SQLite has one writer at a time: the transaction holds the database's write lock throughout
   * `work`, and other store calls on the same DataSource wait for it, so `work` must not call the
   * store itself there. A check that finds SQLite locked (or a deadlock) before `work` started
   * retries the transaction for up to `conflictRetryMs`; once `work` has run nothing is retried.
   */
  async runInTransaction<T>(
    lease: RecordLease,
    work: (manager: EntityManager) => Promise<TransactionalCompletion<T>>,
    options: RunInTransactionOptions = {},
  ): Promise<T> {
    const transaction = (manager: EntityManager) => this.confirmWithWork(manager, lease, work);
    try {
      return await this.connection.transaction(
        transaction,
        options.isolationLevel,
        (error) => error instanceof ConflictBeforeWork,
      );
    } catch (error) {
      throw this.connection.unavailableOr(
        error instanceof ConflictBeforeWork ? error.cause : error,
      );
    }
  }

  private async confirmWithWork<T>(
    manager: EntityManager,
    lease: RecordLease,
    work: (manager: EntityManager) => Promise<TransactionalCompletion<T>>,
  ): Promise<T> {
    const { statements } = this.connection;
    const runner = manager.queryRunner as QueryRunner;
    const lockKey = leaseLockKey(lease);
    try {
      await this.checkHeldAtStart(runner, lease);
      if (this.connection.dialect !== 'mysql') this.rowLockingRunners.set(lockKey, runner);
      const { response, result } = await CallTransaction.run(this.dataSource, manager, () =>
        work(manager),
      );
      const completed = await query(
        runner,
        statements.complete,
        completeParameters(lease, encodeStoredResponse(response), this.clock.now()),
      );
      if (completed.affected !== 1) throw new LeaseLostError(lease.identity, lease.fence);
      return result;
    } catch (error) {
      discardIfSessionEnded(runner, error);
      throw error;
    } finally {
      this.rowLockingRunners.delete(lockKey);
    }
  }

  private async checkHeldAtStart(runner: QueryRunner, lease: RecordLease): Promise<void> {
    const { dialect, statements } = this.connection;
    let held: StatementResult;
    try {
      held = await query(runner, statements.lockHeld, heldParameters(lease));
    } catch (error) {
      throw isRetryableConflict(error) ? new ConflictBeforeWork(error) : error;
    }
    const holds = dialect === 'sqlite' ? held.affected === 1 : held.records.length === 1;
    if (!holds) throw new LeaseLostError(lease.identity, lease.fence);
  }
}

/** A holder's lease at one fence: what `rowLockingRunners` is keyed by. */
function leaseLockKey(lease: RecordLease): string {
  return `${lease.ownerToken}:${lease.fence}`;
}

/** A lock conflict hit the check before `work` ran, so the whole transaction may be retried. */
class ConflictBeforeWork extends Error {
  constructor(override readonly cause: unknown) {
    super('lock conflict before the work started', { cause });
  }
}

function heldParameters(lease: RecordLease): unknown[] {
  return [lease.keyHash, lease.ownerToken, lease.fence];
}

function completeParameters(lease: RecordLease, encoded: EncodedResponse, now: number): unknown[] {
  return [
    encoded.status,
    encoded.headers,
    encoded.bodyKind,
    encoded.body &&
      Buffer.from(encoded.body.buffer, encoded.body.byteOffset, encoded.body.byteLength),
    now,
    now,
    ...heldParameters(lease),
  ];
}
