import { OncelyConfigurationError } from '@oncely/core';
import { AddIdempotencyRecordOwner1798761600000 } from './add-idempotency-record-owner.migration.js';
import { CreateIdempotencyRecordTable1767225600000 } from './create-idempotency-record-table.migration.js';
import { ownerColumnName } from './record-table.js';

/**
 * The record table of `TypeOrmIdempotencyRecordStore` is missing, or lacks columns this version
 * writes: oncely's migrations have not (all) run on the DataSource. Raised at start-up, because
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
    const migration = migrationsAdding(missingColumns).join(', ');
    const problem =
      missingColumns.length === 0
        ? `The idempotency record table ${table} does not exist`
        : `The idempotency record table ${table} lacks the column(s) ${missingColumns.join(', ')}`;
    super(
      `${problem}, so every protected request would fail. oncely's migrations (${migration}) have not run on this DataSource. Build its options with withIdempotencyRecords(options) from @oncely/typeorm, which adds the IdempotencyRecord entity and the migrations, then run them: migrationsRun: true, await dataSource.runMigrations(), or the TypeORM CLI (npx typeorm migration:run -d <your data source file>). See the @oncely/typeorm README, "Creating the table".`,
    );
  }
}

/** The migrations creating `missingColumns`: all of them for a missing table. */
function migrationsAdding(missingColumns: readonly string[]): string[] {
  const names: string[] = [];
  if (missingColumns.length === 0 || missingColumns.some((name) => name !== ownerColumnName)) {
    names.push(CreateIdempotencyRecordTable1767225600000.name);
  }
  if (missingColumns.length === 0 || missingColumns.includes(ownerColumnName)) {
    names.push(AddIdempotencyRecordOwner1798761600000.name);
  }
  return names;
}
