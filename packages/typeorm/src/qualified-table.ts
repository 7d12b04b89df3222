import type { DataSource } from 'typeorm';
import { recordDialectOf } from './record-dialect.js';

/**
 * One of oncely's tables on `dataSource`, qualified as the store's statements qualify it: by the
 * schema on PostgreSQL, the database on MySQL/MariaDB, not at all on SQLite. Each part is passed
 * through `quote` (the driver's `escape` for SQL, nothing for messages).
 */
export function qualifiedTable(
  dataSource: DataSource,
  table: string,
  quote: (part: string) => string = (part) => part,
): string {
  const { database, schema, tableName } = dataSource.driver.parseTableName(table);
  const dialect = recordDialectOf(dataSource.options.type);
  const qualifier = dialect === 'postgres' ? schema : dialect === 'mysql' ? database : undefined;
  return [qualifier, tableName]
    .filter((part): part is string => Boolean(part))
    .map(quote)
    .join('.');
}
