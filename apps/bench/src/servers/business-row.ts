/**
 * The business row the PostgreSQL contenders write: one order per call, as a real route would,
 * so that `bare-pg-write` and the idempotent routes in front of the same write differ only by
 * what oncely adds.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { AcceptedOrder } from './bench-handler.js';

/** Connection settings of the bench's PostgreSQL database (`PG*` variables, test defaults). */
export function postgresConnection(schema: string) {
  return {
    type: 'postgres' as const,
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    username: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD ?? '',
    database: process.env.PGDATABASE ?? 'test',
    schema,
    poolSize: 20,
  };
}

/** The run's schema and its order table; every server of the run may call it, in turn. */
export async function createOrderTable(source: DataSource, schema: string): Promise<void> {
  await source.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await source.query(
    `CREATE TABLE IF NOT EXISTS "${schema}"."bench_order" (id bigserial PRIMARY KEY, order_no bigint NOT NULL, customer text, amount text, created_at timestamptz NOT NULL DEFAULT now())`,
  );
}

/** Inserts `order` through `manager` (its transaction, when it has one): one parameterized INSERT. */
export async function insertOrder(
  manager: EntityManager,
  schema: string,
  order: AcceptedOrder,
): Promise<void> {
  await manager.query(
    `INSERT INTO "${schema}"."bench_order" (order_no, customer, amount) VALUES ($1, $2, $3)`,
    [order.orderId, String(order.customer), String(order.amount)],
  );
}
