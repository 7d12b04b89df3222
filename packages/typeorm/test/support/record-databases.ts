import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '@oncely/core/adapter';
import { withIdempotencyRecords } from '@oncely/typeorm';
import { requireService, services } from '@oncely/testing-kit';
import { DataSource, type DataSourceOptions } from 'typeorm';

/**
 * One database the suites run on, isolated per test run: a fresh PostgreSQL schema, MariaDB
 * database or SQLite file, which the run creates, migrates and drops again. The servers are
 * shared with other engineers' tests, so nothing outside that place is touched.
 */
export interface RecordDatabase {
  readonly name: 'postgres' | 'mariadb' | 'sqlite';
  /** Creates the isolated place and runs the migrations in it. */
  setUp(): Promise<void>;
  /** A new DataSource with its own connection(s) to the place, initialised. */
  connect(poolSize?: number): Promise<DataSource>;
  /** Destroys every DataSource `connect` made and drops the place. */
  tearDown(): Promise<void>;
}

const runId = () => randomBytes(5).toString('hex');

function recordDatabase(
  name: RecordDatabase['name'],
  place: {
    create(): Promise<void>;
    options(poolSize: number): DataSourceOptions;
    drop(): Promise<void>;
  },
): RecordDatabase {
  const open: DataSource[] = [];
  return {
    name,
    async setUp() {
      await place.create();
      const migrator = await new DataSource(withIdempotencyRecords(place.options(1))).initialize();
      try {
        await migrator.runMigrations();
      } finally {
        await migrator.destroy();
      }
    },
    async connect(poolSize = 10) {
      const dataSource = await new DataSource(
        withIdempotencyRecords(place.options(poolSize)),
      ).initialize();
      open.push(dataSource);
      return dataSource;
    },
    async tearDown() {
      await Promise.all(open.splice(0).map((dataSource) => dataSource.destroy()));
      await place.drop();
    },
  };
}

function postgres(): RecordDatabase {
  const schema = `oncely_test_${runId()}`;
  const { host, port, username, password, database } = services.postgres;
  const base = { type: 'postgres' as const, host, port, username, password, database };
  const admin = async (sql: string) => {
    await requireService('postgres');
    const dataSource = await new DataSource(base).initialize();
    try {
      await dataSource.query(sql);
    } finally {
      await dataSource.destroy();
    }
  };
  return recordDatabase('postgres', {
    create: () => admin(`CREATE SCHEMA "${schema}"`),
    options: (poolSize) => ({ ...base, schema, poolSize }),
    drop: () => admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  });
}

function mariadb(): RecordDatabase {
  const database = `oncely_test_${runId()}`;
  const { host, port, username, password } = services.mariadb;
  const base = { type: 'mariadb' as const, host, port, username, password };
  const admin = async (sql: string) => {
    await requireService('mariadb');
    const dataSource = await new DataSource(base).initialize();
    try {
      await dataSource.query(sql);
    } finally {
      await dataSource.destroy();
    }
  };
  return recordDatabase('mariadb', {
    create: () => admin(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`),
    options: (poolSize) => ({ ...base, database, poolSize }),
    drop: () => admin(`DROP DATABASE IF EXISTS \`${database}\``),
  });
}

function sqlite(): RecordDatabase {
  let directory = '';
  return recordDatabase('sqlite', {
    create: async () => {
      directory = mkdtempSync(join(tmpdir(), 'oncely-records-'));
    },
    // Several connections in one process: a blocking busy wait would stall the event loop the
    // lock holder needs to finish, so SQLITE_BUSY returns at once and the store retries
    // asynchronously.
    options: () => ({
      type: 'better-sqlite3',
      database: join(directory, 'records.sqlite'),
      enableWAL: true,
      timeout: 0,
    }),
    drop: async () => rmSync(directory, { recursive: true, force: true }),
  });
}

/** Fresh, isolated databases for one suite, in `describe.each` form. */
export function recordDatabases(): [RecordDatabase['name'], RecordDatabase][] {
  return [postgres(), mariadb(), sqlite()].map((database) => [database.name, database]);
}

/** A clock the test moves by hand; every store of a test shares one. */
export class FakeClock implements Clock {
  private current = Date.now();

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/** Escaped name of the records table on `dataSource`, qualified as the store qualifies it. */
export function recordsTable(dataSource: DataSource): string {
  return dataSource
    .getMetadata('IdempotencyRecord')
    .tablePath.split('.')
    .map((part) => dataSource.driver.escape(part))
    .join('.');
}
