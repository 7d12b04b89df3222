import { EntitySchema, type EntitySchemaColumnOptions } from 'typeorm';
import { IdempotencyRecord } from './idempotency-record.entity.js';
import { recordDialectOf } from './record-dialect.js';
import {
  expiresAtIndexName,
  keyHashIndexName,
  recordColumns,
  recordTableName,
} from './record-table.js';

const toNumber = {
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
  to: (value: unknown) => value,
};

/**
 * The TypeORM entity of `IdempotencyRecord` for a DataSource of `databaseType` ("postgres",
 * "mysql", "mariadb" or "better-sqlite3"), with explicit column types for that database. Register
 * it to query records with a repository or to let `synchronize` create the table.
 */
export function idempotencyRecordEntity(databaseType: string): EntitySchema<IdempotencyRecord> {
  const columns: Record<string, EntitySchemaColumnOptions> = {};
  for (const column of recordColumns(recordDialectOf(databaseType))) {
    columns[column.property] = {
      name: column.name,
      type: column.type as EntitySchemaColumnOptions['type'],
      ...(column.length === undefined ? {} : { length: column.length }),
      nullable: column.nullable ?? false,
      ...(column.primary ? { primary: true, generated: 'increment' as const } : {}),
      ...(column.charset ? { charset: column.charset, collation: column.collation } : {}),
      ...(column.numeric ? { transformer: toNumber } : {}),
    };
  }
  return new EntitySchema<IdempotencyRecord>({
    name: 'IdempotencyRecord',
    target: IdempotencyRecord,
    tableName: recordTableName,
    columns,
    indices: [
      { name: keyHashIndexName, columns: ['keyHash'], unique: true },
      { name: expiresAtIndexName, columns: ['expiresAt'] },
    ],
  });
}
