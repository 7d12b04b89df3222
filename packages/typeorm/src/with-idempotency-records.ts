import type { DataSourceOptions, MixedList } from 'typeorm';
import { CreateOncelySchema1796256000000 } from './create-oncely-schema.migration.js';
import { idempotencyRecordEntity } from './idempotency-record.schema.js';
import { UnsupportedDatabaseError } from './unsupported-database.error.js';

/** The migrations that create oncely's tables, oldest first: one, until a release changes them. */
export const idempotencyRecordMigrations = [CreateOncelySchema1796256000000];

/**
 * The part of DataSource options `withIdempotencyRecords` reads and extends. `DataSourceOptions`
 * has it, and so has what a `TypeOrmModule.forRoot` / `forRootAsync` factory takes and returns
 * (`TypeOrmModuleOptions`, where every field is optional), without this package depending on
 * `@nestjs/typeorm`.
 */
export interface IdempotencyRecordsDataSourceOptions {
  /** The database type; required here, as it decides the record table's column types. */
  readonly type?: DataSourceOptions['type'];
  /** The app's entities; `IdempotencyRecord` is added to them. */
  readonly entities?: DataSourceOptions['entities'];
  /** The app's migrations; oncely's are added after them. */
  readonly migrations?: DataSourceOptions['migrations'];
}

/**
 * Adds the `IdempotencyRecord` entity (with the column types of `options.type`) and oncely's
 * migrations to DataSource options, keeping the ones already listed:
 * `new DataSource(withIdempotencyRecords({ type: 'postgres', ... }))`, then `runMigrations()`,
 * or `TypeOrmModule.forRootAsync({ useFactory: () => withIdempotencyRecords({ ... }) })`.
 * Throws `UnsupportedDatabaseError` when `type` is missing or not PostgreSQL, MySQL/MariaDB or
 * better-sqlite3.
 */
export function withIdempotencyRecords<T extends IdempotencyRecordsDataSourceOptions>(
  options: T,
): T {
  if (options.type === undefined) throw new UnsupportedDatabaseError('undefined');
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
