import { requireService, services } from '@oncely/testing-kit';
import { withIdempotencyRecords } from '@oncely/typeorm';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Column,
  DataSource,
  Entity,
  PrimaryGeneratedColumn,
  Table,
  type DataSourceOptions,
} from 'typeorm';

/** The business row a payment handler writes: one per effect, counted by `ref`. */
@Entity('payment')
export class Payment {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  ref!: string;

  @Column({ type: 'int' })
  amount!: number;
}

/**
 * One database of a run, isolated like the record store suites do it (a PostgreSQL schema, a
 * MariaDB database or an SQLite file of its own), with the records table and a `payment` table.
 */
export interface PaymentsDatabase {
  readonly name: 'postgres' | 'mariadb' | 'sqlite';
  /** Creates the place and returns the app's DataSource on it, migrated. */
  open(): Promise<DataSource>;
  close(): Promise<void>;
}

const runId = () => randomBytes(5).toString('hex');

function paymentsDatabase(
  name: PaymentsDatabase['name'],
  place: { create(): Promise<void>; options(): DataSourceOptions; drop(): Promise<void> },
): PaymentsDatabase {
  let dataSource: DataSource | undefined;
  return {
    name,
    async open() {
      await place.create();
      const source = new DataSource(
        withIdempotencyRecords({ ...place.options(), entities: [Payment] }),
      );
      dataSource = await source.initialize();
      await source.runMigrations();
      const runner = source.createQueryRunner();
      try {
        await runner.createTable(
          new Table({
            name: 'payment',
            columns: [
              {
                name: 'id',
                type: 'integer',
                isPrimary: true,
                isGenerated: true,
                generationStrategy: 'increment',
              },
              { name: 'ref', type: 'varchar', length: '64' },
              { name: 'amount', type: 'integer' },
            ],
          }),
        );
      } finally {
        await runner.release();
      }
      return source;
    },
    async close() {
      if (dataSource?.isInitialized) await dataSource.destroy();
      await place.drop();
    },
  };
}

async function adminQuery(options: DataSourceOptions, sql: string): Promise<void> {
  const admin = await new DataSource(options).initialize();
  try {
    await admin.query(sql);
  } finally {
    await admin.destroy();
  }
}

function postgres(): PaymentsDatabase {
  const schema = `oncely_tx_${runId()}`;
  const base = { type: 'postgres' as const, ...services.postgres };
  return paymentsDatabase('postgres', {
    create: async () => {
      await requireService('postgres');
      await adminQuery(base, `CREATE SCHEMA "${schema}"`);
    },
    options: () => ({ ...base, schema, poolSize: 5 }),
    drop: () => adminQuery(base, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  });
}

function mariadb(): PaymentsDatabase {
  const database = `oncely_tx_${runId()}`;
  const { host, port, username, password } = services.mariadb;
  const base = { type: 'mariadb' as const, host, port, username, password };
  return paymentsDatabase('mariadb', {
    create: async () => {
      await requireService('mariadb');
      await adminQuery(base, `CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4`);
    },
    options: () => ({ ...base, database, poolSize: 5 }),
    drop: () => adminQuery(base, `DROP DATABASE IF EXISTS \`${database}\``),
  });
}

function sqlite(): PaymentsDatabase {
  let directory = '';
  return paymentsDatabase('sqlite', {
    create: async () => {
      directory = mkdtempSync(join(tmpdir(), 'oncely-tx-'));
    },
    options: () => ({ type: 'better-sqlite3', database: join(directory, 'app.sqlite') }),
    drop: async () => rmSync(directory, { recursive: true, force: true }),
  });
}

/** The three databases a transactional route must behave alike on, in `describe.each` form. */
export function paymentsDatabases(): [PaymentsDatabase['name'], PaymentsDatabase][] {
  return [postgres(), mariadb(), sqlite()].map((database) => [database.name, database]);
}
