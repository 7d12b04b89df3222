import { OncelyConfigurationError } from '@oncely/core';
import { CreateOncelySchema1796256000000 } from './create-oncely-schema.migration.js';

/**
 * The record table of `TypeOrmIdempotencyRecordStore` is missing, or lacks columns oncely
 * writes: oncely's migration has not run on the DataSource. Raised at start-up, because
 * otherwise every protected request would fail with the database's own error.
 */
export class RecordTableNotMigratedError extends OncelyConfigurationError {
  /** Stable and machine-readable: what callers branch on, never the message. */
  override readonly code = 'record_table_not_migrated';

  /**
   * @param table the table as the store addresses it, schema or database included.
   * @param missingColumns the columns it lacks; empty when the table itself is missing.
   */
  constructor(
    readonly table: string,
    readonly missingColumns: readonly string[],
  ) {
    const problem =
      missingColumns.length === 0
        ? `The idempotency record table ${table} does not exist`
        : `The idempotency record table ${table} lacks the column(s) ${missingColumns.join(', ')}`;
    super(
      `${problem}, so every protected request would fail. oncely's migration ${CreateOncelySchema1796256000000.name} has not run on this DataSource. Build its options with withIdempotencyRecords(options) from @oncely/typeorm, which adds the IdempotencyRecord entity and the migrations, then run them: migrationsRun: true, await dataSource.runMigrations(), or the TypeORM CLI (npx typeorm migration:run -d <your data source file>). See the @oncely/typeorm README, "Creating the table".`,
    );
  }
}
