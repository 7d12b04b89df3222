import { randomUUID } from 'node:crypto';
import type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  IdempotencyRecordListing,
  RecordInspection,
  RecordSummary,
  StoredResponse,
} from '@oncely/core';
import { decodeStoredResponse, recordKeyHash, systemClock, type Clock } from '@oncely/core/adapter';
import { setTimeout as delay } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import { recordDialectOf } from './record-dialect.js';
import { qualifiedTable } from './qualified-table.js';
import { recordTableName } from './record-table.js';
import { UninitializedDataSourceError } from './uninitialized-data-source.error.js';

/** How long a release may wait on a row lock before the holder is ended (ms). */
const BLOCKER_CHECK_MS = 50;
/** Rows read per query by `listRecords` unless told otherwise. */
const DEFAULT_LIST_BATCH = 500;

interface ListedRow {
  id: number | string;
  key_hash: string;
  key: string;
  status: string;
  owner: string | null;
  expires_at: number | string;
}

interface QueryResult {
  readonly affected?: number;
}

interface AdminRow {
  fingerprint: string;
  owner: string | null;
  status: string;
  fence: number | string;
  lease_expires_at: number | string | null;
  expires_at: number | string;
  response_status: number | string | null;
  response_headers: string | null;
  response_body_kind: string | null;
  response_body: Uint8Array | null;
}

/**
 * Operator access to the records of `TypeOrmIdempotencyRecordStore` (use it through
 * `OncelyAdmin`). A force-release expires the row and changes its owner instead of deleting it,
 * so the holder's fenced `complete` fails and the next `begin` takes the row over with a higher
 * fence, as after any abandoned lease. Records are listed by the operation prefix of their
 * stored identity (`key`). Pass the store's `clock` if you gave it one.
 */
export class TypeOrmIdempotencyRecordAdmin
  implements IdempotencyRecordAdmin, IdempotencyRecordListing
{
  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: Clock = systemClock,
  ) {
    recordDialectOf(dataSource.options.type);
  }

  async inspect(identity: string): Promise<RecordInspection> {
    const keyHash = recordKeyHash(identity);
    const [row] = (await this.#query(
      `SELECT ${this.#columns('fingerprint', 'owner', 'status', 'fence', 'lease_expires_at', 'expires_at', 'response_status', 'response_headers', 'response_body_kind', 'response_body')} FROM ${this.#table()} WHERE ${this.#c('key_hash')} = ?`,
      [keyHash],
    )) as AdminRow[];
    const now = this.clock.now();
    if (!row || Number(row.expires_at) <= now) return { kind: 'absent', keyHash };
    const common = {
      keyHash,
      fingerprint: row.fingerprint,
      ...(row.owner !== null && { owner: row.owner }),
      fence: Number(row.fence),
    };
    if (row.status !== 'completed') {
      return { kind: 'in_progress', ...common, leaseExpiresAt: new Date(Number(row.expires_at)) };
    }
    return {
      kind: 'completed',
      ...common,
      expiresAt: new Date(Number(row.expires_at)),
      response: decodeStoredResponse({
        status: Number(row.response_status),
        headers: row.response_headers ?? '{}',
        bodyKind: (row.response_body_kind ?? 'empty') as StoredResponse['body']['kind'],
        body: row.response_body,
      }),
    };
  }

  async forceRelease(identity: string): Promise<ForceReleaseOutcome> {
    const keyHash = recordKeyHash(identity);
    const now = this.clock.now();
    const c = (name: string) => this.#c(name);
    const [row] = (await this.#query(
      `SELECT ${this.#columns('status', 'fence', 'expires_at')} FROM ${this.#table()} WHERE ${c('key_hash')} = ?`,
      [keyHash],
    )) as AdminRow[];
    if (!row || Number(row.expires_at) <= now) return { kind: 'absent' };
    if (row.status === 'completed') return { kind: 'completed' };
    const fence = Number(row.fence);
    const result = await this.#write(
      `UPDATE ${this.#table()} SET ${c('owner_token')} = ?, ${c('lease_expires_at')} = ?, ${c('expires_at')} = ? WHERE ${c('key_hash')} = ? AND ${c('fence')} = ? AND ${c('status')} = 'in_progress'`,
      [`released:${randomUUID()}`, now, now, keyHash, fence],
    );
    // Zero rows: it completed or changed hands meanwhile; report what it is now.
    if ((result.affected ?? 0) === 1) return { kind: 'released', fence };
    return this.forceRelease(identity);
  }

  async *listRecords(
    operation: string,
    options: { readonly batchSize?: number } = {},
  ): AsyncIterable<RecordSummary> {
    const batchSize = options.batchSize ?? DEFAULT_LIST_BATCH;
    const c = (name: string) => this.#c(name);
    // '!' escapes LIKE's wildcards on every dialect; a prefix match can use an index on `key`.
    const prefix = `${operation.replace(/[!%_]/g, '!$&')}:%`;
    const sql = `SELECT ${this.#columns('id', 'key_hash', 'key', 'status', 'owner', 'expires_at')} FROM ${this.#table()} WHERE ${c('key')} LIKE ? ESCAPE '!' AND ${c('expires_at')} > ? AND ${c('id')} > ? ORDER BY ${c('id')} LIMIT ?`;
    let after: number | string = 0;
    for (;;) {
      const rows = (await this.#query(sql, [
        prefix,
        this.clock.now(),
        after,
        batchSize,
      ])) as ListedRow[];
      for (const row of rows) {
        yield {
          identity: row.key,
          keyHash: row.key_hash,
          kind: row.status === 'completed' ? 'completed' : 'in_progress',
          ...(row.owner !== null && { owner: row.owner }),
          expiresAt: new Date(Number(row.expires_at)),
        };
      }
      if (rows.length < batchSize) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  async deleteRecord(identity: string): Promise<boolean> {
    const result = await this.#write(
      `DELETE FROM ${this.#table()} WHERE ${this.#c('key_hash')} = ? AND ${this.#c('expires_at')} > ?`,
      [recordKeyHash(identity), this.clock.now()],
    );
    // A holder's fenced `complete` then matches no row; nothing is cached outside the table.
    return (result.affected ?? 0) > 0;
  }

  /** Runs a write on a connection of its own, ending a transaction that holds the row on PostgreSQL. */
  async #write(sql: string, parameters: unknown[]): Promise<QueryResult> {
    const runner = this.dataSource.createQueryRunner('master');
    try {
      const backend = await this.#postgresBackendOf(runner);
      const write = runner.query(this.#numbered(sql), parameters, true) as Promise<QueryResult>;
      return backend === undefined ? await write : await this.#ending(backend, write);
    } finally {
      await runner.release();
    }
  }

  /** The PostgreSQL backend of `runner`, or `undefined` on other databases. */
  async #postgresBackendOf(runner: QueryRunner): Promise<number | undefined> {
    if (recordDialectOf(this.dataSource.options.type) !== 'postgres') return undefined;
    const [row] = (await runner.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
    return row?.pid;
  }

  /**
   * A transactional handler holds its record's row locked until it commits, so on PostgreSQL
   * the release would wait for the whole handler. While it waits, the transactions it waits for
   * are ended (`pg_terminate_backend`): they roll back, the handler's writes with them, and its
   * call fails as on any lost connection (a retryable 503). On MySQL/MariaDB the row is locked
   * only by the final fenced update, just before the commit, and SQLite shares one connection,
   * so neither waits.
   */
  async #ending(backend: number, release: Promise<QueryResult>): Promise<QueryResult> {
    let settled = false;
    const done = release.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      await Promise.race([done, delay(BLOCKER_CHECK_MS)]);
      if (settled) return release;
      await this.dataSource.query(
        'SELECT pg_terminate_backend(blocker) FROM unnest(pg_blocking_pids($1)) AS blocker',
        [backend],
      );
    }
  }

  async #query(sql: string, parameters: unknown[]): Promise<unknown[]> {
    return this.dataSource.query<unknown[]>(this.#numbered(sql), parameters);
  }

  #table(): string {
    if (!this.dataSource.isInitialized) throw new UninitializedDataSourceError();
    const { driver } = this.dataSource;
    return qualifiedTable(this.dataSource, recordTableName, (part) => driver.escape(part));
  }

  #c(name: string): string {
    return this.dataSource.driver.escape(name);
  }

  #columns(...names: string[]): string {
    return names.map((name) => this.#c(name)).join(', ');
  }

  #numbered(sql: string): string {
    if (recordDialectOf(this.dataSource.options.type) !== 'postgres') return sql;
    let index = 0;
    return sql.replace(/\?/g, () => `$${++index}`);
  }
}
