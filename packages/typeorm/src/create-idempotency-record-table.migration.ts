import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { recordDialectOf } from './record-dialect.js';
import {
  expiresAtIndexName,
  keyHashIndexName,
  recordColumns,
  recordTableName,
} from './record-table.js';

/**
 * Creates `oncely_idempotency_record` with its unique index on `key_hash` and its index on
 * `expires_at`, using the column types of the database it runs on.
 */
export class CreateIdempotencyRecordTable1767225600000 implements MigrationInterface {
  readonly name = 'CreateIdempotencyRecordTable1767225600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = recordDialectOf(queryRunner.connection.options.type);
    await queryRunner.createTable(
      new Table({
        name: recordTableName,
        columns: recordColumns(dialect).map((column) => ({
          name: column.name,
          type: column.type,
          ...(column.length === undefined ? {} : { length: String(column.length) }),
          isNullable: column.nullable ?? false,
          ...(column.primary
            ? { isPrimary: true, isGenerated: true, generationStrategy: 'increment' as const }
            : {}),
          ...(column.charset ? { charset: column.charset, collation: column.collation } : {}),
        })),
        indices: [
          { name: keyHashIndexName, columnNames: ['key_hash'], isUnique: true },
          { name: expiresAtIndexName, columnNames: ['expires_at'] },
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(recordTableName, true);
  }
}
