import type { DataSourceOptions, MixedList } from 'typeorm';
import { CreateIdempotencyRecordTable1767225600000 } from './create-idempotency-record-table.migration.js';
import { idempotencyRecordEntity } from './idempotency-record.schema.js';

/** The migrations that create and evolve oncely's tables, oldest first. */
export const idempotencyRecordMigrations = [CreateIdempotencyRecordTable1767225600000];

/**
 * Adds the `IdempotencyRecord` entity (with the column types of `options.type`) and oncely's
 * migrations to DataSource options, keeping the ones already listed:
 * `new DataSource(withIdempotencyRecords({ type: 'postgres', ... }))`, then `runMigrations()`.
 */
export function withIdempotencyRecords<T extends DataSourceOptions>(options: T): T {
  return {
    ...options,
    entities: [...listOf(options.entities), idempotencyRecordEntity(options.type)],
    migrations: [...listOf(options.migrations), ...idempotencyRecordMigrations],
  };
}

function listOf<T>(list: MixedList<T> | undefined): T[] {
  if (!list) return [];
  return Array.isArray(list) ? list : Object.values(list);
}
