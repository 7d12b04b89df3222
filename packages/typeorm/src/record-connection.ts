import { setTimeout as sleep } from 'node:timers/promises';
import { RecordStoreUnavailableError } from '@oncely/core';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { RunInTransactionOptions } from './typeorm-idempotency-record-store.options.js';
import {
  isConnectionLost,
  isRetryableConflict,
  isSessionEnded,
  recordDialectOf,
  type RecordDialect,
} from './record-dialect.js';
import { postgresPoolStatement } from './postgres-pool-statement.js';
import type { StatementResult } from './statement-result.js';
import { RecordStatements } from './record-statements.js';
import { qualifiedTable } from './qualified-table.js';
import { recordTableName } from './record-table.js';
import { SerialQueue } from './serial-queue.js';
import { UninitializedDataSourceError } from './uninitialized-data-source.error.js';

export type { StatementResult } from './statement-result.js';

/**
 * better-sqlite3 gives a DataSource a single connection that every query runner shares, so a
 * transaction opened on it would swallow any other statement run meanwhile. Store operations on
 * such a DataSource therefore take turns, across all stores built on it.
 */
const sqliteTurns = new WeakMap<DataSource, SerialQueue>();

/**
 * How the record store's statements reach the database: built for the DataSource's dialect and
 * schema on first use, one at a time on SQLite, retried on lock conflicts for up to
 * `conflictRetryMs`, with a lost connection turned into `RecordStoreUnavailableError`.
 */
export class RecordConnection {
  private prepared?: {
    dialect: RecordDialect;
    statements: RecordStatements;
    turns?: SerialQueue;
    /** PostgreSQL: auto-committed statements straight on a pooled client, no query runner. */
    pooled?: (sql: string, parameters: unknown[]) => Promise<StatementResult>;
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly conflictRetryMs: number,
  ) {}

  get dialect(): RecordDialect {
    return this.prepare().dialect;
  }

  get statements(): RecordStatements {
    return this.prepare().statements;
  }

  /** One statement outside any transaction (auto-commit), retried on lock conflicts. */
  execute(sql: string, parameters: unknown[]): Promise<StatementResult> {
    const { turns, pooled } = this.prepare();
    if (pooled) {
      const direct = () =>
        pooled(sql, parameters).catch((error: unknown) => {
          throw this.unavailableOr(error);
        });
      return this.retryingConflicts(direct, isRetryableConflict);
    }
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

  /** `body` in one transaction, whole again for as long as `retryable` says its error allows. */
  transaction<T>(
    body: (manager: EntityManager) => Promise<T>,
    isolationLevel: RunInTransactionOptions['isolationLevel'],
    retryable: (error: unknown) => boolean,
  ): Promise<T> {
    const { turns } = this.prepare();
    const run = () =>
      isolationLevel
        ? this.dataSource.transaction(isolationLevel, body)
        : this.dataSource.transaction(body);
    return this.retryingConflicts(() => (turns ? turns.run(run) : run()), retryable);
  }

  /** A lost connection becomes a retryable 503; anything else passes through untouched. */
  unavailableOr(error: unknown): unknown {
    if (error instanceof RecordStoreUnavailableError || !isConnectionLost(error)) return error;
    return new RecordStoreUnavailableError(this.dataSource.options.type, { cause: error });
  }

  /** Statements are built on first use, once the DataSource is initialised and knows its schema. */
  private prepare() {
    if (this.prepared) return this.prepared;
    if (!this.dataSource.isInitialized) throw new UninitializedDataSourceError();
    const { driver } = this.dataSource;
    const dialect = recordDialectOf(this.dataSource.options.type);
    const table = qualifiedTable(this.dataSource, recordTableName, (part) => driver.escape(part));
    this.prepared = {
      dialect,
      statements: new RecordStatements(dialect, table, (name) => driver.escape(name)),
      ...(dialect === 'sqlite' ? { turns: this.sqliteTurns() } : {}),
      ...(dialect === 'postgres' ? { pooled: postgresPoolStatement(this.dataSource) } : {}),
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

/** One statement on `runner`, whatever the driver returns, as records and an affected count. */
export async function query(
  runner: QueryRunner,
  sql: string,
  parameters: unknown[],
): Promise<StatementResult> {
  const result = await runner.query(sql, parameters, true);
  return { records: result.records ?? [], affected: result.affected ?? 0 };
}

/**
 * Closes a pooled PostgreSQL client whose session the server ended, so the pool drops it on
 * release instead of handing it to the next operation.
 */
export function discardIfSessionEnded(runner: QueryRunner, error: unknown): void {
  if (!isSessionEnded(error)) return;
  const client = (runner as { databaseConnection?: { end?: () => Promise<void> } })
    .databaseConnection;
  client?.end?.().catch(() => undefined);
}
