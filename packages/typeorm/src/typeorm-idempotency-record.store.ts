import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LeaseLostError,
  RecordStoreUnavailableError,
  decodeStoredResponse,
  encodeStoredResponse,
  positiveWholeNumber,
  recordKeyHash,
  systemClock,
  type BeginOptions,
  type BeginOutcome,
  type Clock,
  type EncodedResponse,
  type RecordLease,
  type StoredResponse,
  type TransactionalCompletion,
  type TransactionalIdempotencyRecordStore,
} from '@oncely/core';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import {
  isConnectionLost,
  isRetryableConflict,
  isSessionEnded,
  isUniqueViolation,
  recordDialectOf,
} from './record-dialect.js';
import type { RecordDialect } from './record-dialect.js';
import { RecordStatements } from './record-statements.js';
import { recordTableName } from './record-table.js';
import { SerialQueue } from './serial-queue.js';
import { UninitializedDataSourceError } from './uninitialized-data-source.error.js';
import type {
  RunInTransactionOptions,
  TypeOrmIdempotencyRecordStoreOptions,
} from './typeorm-idempotency-record-store.options.js';

interface RecordRow {
  fingerprint: string;
  status: string;
  owner_token: string;
  fence: number | string;
  expires_at: number | string;
  response_status: number | string | null;
  response_headers: string | null;
  response_body_kind: string | null;
  response_body: Uint8Array | null;
}

interface StatementResult {
  readonly records: unknown[];
  readonly affected: number;
}

/**
 * better-sqlite3 gives a DataSource a single connection that every query runner shares, so a
 * transaction opened on it would swallow any other statement run meanwhile. Store operations on
 * such a DataSource therefore take turns, across all stores built on it.
 */
const sqliteTurns = new WeakMap<DataSource, SerialQueue>();

/** Keeps one purge's delete under every driver's bound-parameter limit (SQLite: 32 766). */
const maxPurgeBatch = 10_000;

/** Rounds `begin` may spend on a record that vanishes or changes hands between its statements. */
const maxBeginRounds = 8;

/**
 * Durable idempotency records in the service's own database through TypeORM (PostgreSQL,
 * MySQL/MariaDB, SQLite via better-sqlite3), in the `oncely_idempotency_record` table that
 * `CreateIdempotencyRecordTable1767225600000` creates.
 *
 * `begin` inserts the record: the unique index on `key_hash` is the lock. `complete`, `release`
 * and `renew` are single statements conditional on owner token and fence, so a holder that lost
 * its lease changes nothing. `runInTransaction` confirms the record in the same transaction as
 * the work's own writes.
 */
export class TypeOrmIdempotencyRecordStore implements TransactionalIdempotencyRecordStore<EntityManager> {
  private readonly clock: Clock;
  private readonly conflictRetryMs: number;
  private prepared?: { dialect: RecordDialect; statements: RecordStatements; turns?: SerialQueue };

  /** @param dataSource stays yours: the store never initialises or destroys it. */
  constructor(
    private readonly dataSource: DataSource,
    options: TypeOrmIdempotencyRecordStoreOptions = {},
  ) {
    recordDialectOf(dataSource.options.type);
    this.clock = options.clock ?? systemClock;
    this.conflictRetryMs = positiveWholeNumber(
      'conflictRetryMs',
      options.conflictRetryMs ?? 10_000,
    );
  }

  async begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    const leaseTtlMs = positiveWholeNumber('leaseTtlMs', options.leaseTtlMs);
    const retentionMs = positiveWholeNumber('retentionMs', options.retentionMs);
    const { statements } = this.prepare();
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
      const holder = [digest, ownerToken, leaseExpiresAt, retentionMs, now, leaseExpiresAt];
      try {
        await this.execute(statements.insert, [keyHash, identity, ...holder]);
        return lease(1);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }

      const [row] = (await this.execute(statements.select, [keyHash])).records as RecordRow[];
      if (!row) continue;
      const expiresAt = Number(row.expires_at);
      if (expiresAt > now) {
        if (row.fingerprint !== digest) return { kind: 'mismatch' };
        if (row.status === 'completed') return { kind: 'replay', response: decodeRow(row) };
        return { kind: 'in_progress', retryAfterMs: expiresAt - now };
      }

      // Expired: an abandoned lease, or a completed record past its retention. Either way the
      // record counts as absent; taking the row over keeps the fence growing for this key.
      const fence = Number(row.fence);
      const taken = await this.execute(statements.takeOver, [
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
    const { statements } = this.prepare();
    const result = await this.execute(
      statements.complete,
      completeParameters(lease, encodeStoredResponse(response), this.clock.now()),
    );
    if (result.affected !== 1) throw new LeaseLostError(lease.identity, lease.fence);
  }

  async release(lease: RecordLease): Promise<void> {
    const { statements } = this.prepare();
    await this.execute(statements.release, heldParameters(lease));
  }

  async renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    positiveWholeNumber('leaseTtlMs', leaseTtlMs);
    const { statements } = this.prepare();
    const leaseExpiresAt = this.clock.now() + leaseTtlMs;
    const result = await this.execute(statements.renew, [
      leaseExpiresAt,
      leaseExpiresAt,
      ...heldParameters(lease),
    ]);
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
    const { statements } = this.prepare();
    const now = this.clock.now();
    const expired = (await this.execute(statements.selectExpired, [now, limit])).records as {
      id: number | string;
    }[];
    if (expired.length === 0) return 0;
    const result = await this.execute(statements.deleteExpired(expired.length), [
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
    const { turns } = this.prepare();
    const transaction = (manager: EntityManager) => this.confirmWithWork(manager, lease, work);
    const attempt = () => {
      const run = () =>
        options.isolationLevel
          ? this.dataSource.transaction(options.isolationLevel, transaction)
          : this.dataSource.transaction(transaction);
      return turns ? turns.run(run) : run();
    };
    try {
      return await this.retryingConflicts(attempt, (error) => error instanceof ConflictBeforeWork);
    } catch (error) {
      throw this.unavailableOr(error instanceof ConflictBeforeWork ? error.cause : error);
    }
  }

  private async confirmWithWork<T>(
    manager: EntityManager,
    lease: RecordLease,
    work: (manager: EntityManager) => Promise<TransactionalCompletion<T>>,
  ): Promise<T> {
    const { statements } = this.prepare();
    const runner = manager.queryRunner as QueryRunner;
    try {
      await this.checkHeldAtStart(runner, lease);
      const { response, result } = await work(manager);
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
    }
  }

  private async checkHeldAtStart(runner: QueryRunner, lease: RecordLease): Promise<void> {
    const { dialect, statements } = this.prepare();
    let held: StatementResult;
    try {
      held = await query(runner, statements.lockHeld, heldParameters(lease));
    } catch (error) {
      throw isRetryableConflict(error) ? new ConflictBeforeWork(error) : error;
    }
    const holds = dialect === 'sqlite' ? held.affected === 1 : held.records.length === 1;
    if (!holds) throw new LeaseLostError(lease.identity, lease.fence);
  }

  /** Statements are built on first use, once the DataSource is initialised and knows its schema. */
  private prepare() {
    if (this.prepared) return this.prepared;
    if (!this.dataSource.isInitialized) throw new UninitializedDataSourceError();
    const { driver } = this.dataSource;
    const dialect = recordDialectOf(this.dataSource.options.type);
    const { database, schema, tableName } = driver.parseTableName(recordTableName);
    const qualifier = dialect === 'postgres' ? schema : dialect === 'mysql' ? database : undefined;
    const table = [qualifier, tableName]
      .filter((part): part is string => Boolean(part))
      .map((part) => driver.escape(part))
      .join('.');
    this.prepared = {
      dialect,
      statements: new RecordStatements(dialect, table, (name) => driver.escape(name)),
      ...(dialect === 'sqlite' ? { turns: this.sqliteTurns() } : {}),
    };
    return this.prepared;
  }

  private sqliteTurns(): SerialQueue {
    let turns = sqliteTurns.get(this.dataSource);
    if (!turns) {
      turns = new SerialQueue();
      sqliteTurns.set(this.dataSource, turns);
    }
    return turns;
  }

  /** One statement outside any transaction (auto-commit), retried on lock conflicts. */
  private execute(sql: string, parameters: unknown[]): Promise<StatementResult> {
    const { turns } = this.prepare();
    const once = async () => {
      const runner = this.dataSource.createQueryRunner('master');
      try {
        return await query(runner, sql, parameters);
      } catch (error) {
        discardIfSessionEnded(runner, error);
        throw this.unavailableOr(error);
      } finally {
        await runner.release();
      }
    };
    return this.retryingConflicts(() => (turns ? turns.run(once) : once()), isRetryableConflict);
  }

  /** A lost connection becomes a retryable 503; anything else passes through untouched. */
  private unavailableOr(error: unknown): unknown {
    if (error instanceof RecordStoreUnavailableError || !isConnectionLost(error)) return error;
    return new RecordStoreUnavailableError(this.dataSource.options.type, { cause: error });
  }

  private async retryingConflicts<T>(
    operation: () => Promise<T>,
    retryable: (error: unknown) => boolean,
  ): Promise<T> {
    const deadline = Date.now() + this.conflictRetryMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await operation();
      } catch (error) {
        if (!retryable(error) || Date.now() >= deadline) throw error;
        // Jittered, so connections that collided do not collide again in step.
        await sleep(pause / 2 + Math.random() * pause);
      }
    }
  }
}

/** A lock conflict hit the check before `work` ran, so the whole transaction may be retried. */
class ConflictBeforeWork extends Error {
  constructor(override readonly cause: unknown) {
    super('lock conflict before the work started', { cause });
  }
}

/**
 * Closes a pooled PostgreSQL client whose session the server ended, so the pool drops it on
 * release instead of handing it to the next operation.
 */
function discardIfSessionEnded(runner: QueryRunner, error: unknown): void {
  if (!isSessionEnded(error)) return;
  const client = (runner as { databaseConnection?: { end?: () => Promise<void> } })
    .databaseConnection;
  client?.end?.().catch(() => undefined);
}

async function query(
  runner: QueryRunner,
  sql: string,
  parameters: unknown[],
): Promise<StatementResult> {
  const result = await runner.query(sql, parameters, true);
  return { records: result.records ?? [], affected: result.affected ?? 0 };
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

function decodeRow(row: RecordRow): StoredResponse {
  return decodeStoredResponse({
    status: Number(row.response_status),
    headers: row.response_headers ?? '{}',
    bodyKind: (row.response_body_kind ?? 'empty') as EncodedResponse['bodyKind'],
    body: row.response_body,
  });
}
