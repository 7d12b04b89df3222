import type { DataSource, Table } from 'typeorm';
import { recordDialectOf } from './record-dialect.js';
import { RecordTableNotMigratedError } from './record-table-not-migrated.error.js';
import { qualifiedTable } from './qualified-table.js';
import { recordColumns, recordTableName } from './record-table.js';
import { UninitializedDataSourceError } from './uninitialized-data-source.error.js';

/**
 * Checks that `dataSource` holds the record table with every column the store writes, and
 * throws `RecordTableNotMigratedError` naming what is missing otherwise. Reads the schema
 * through TypeORM's own inspection, so it asks the same schema (or database) the store writes to.
 */
export async function verifyRecordTable(dataSource: DataSource): Promise<void> {
  if (!dataSource.isInitialized) throw new UninitializedDataSourceError();
  const dialect = recordDialectOf(dataSource.options.type);
  const runner = dataSource.createQueryRunner();
  let table: Table | undefined;
  try {
    table = await runner.getTable(recordTableName);
  } finally {
    await runner.release();
  }
  const expected = recordColumns(dialect).map((column) => column.name);
  const present = new Set(table?.columns.map((column) => column.name));
  const missing = table ? expected.filter((name) => !present.has(name)) : [];
  if (table === undefined || missing.length > 0) {
    throw new RecordTableNotMigratedError(qualifiedTable(dataSource, recordTableName), missing);
  }
}
