import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import {
  claimColumns,
  claimExpiresAtIndexName,
  claimSlotInstanceIndexName,
  claimTableName,
} from './claim-table.js';
import { recordDialectOf } from './record-dialect.js';

/**
 * Creates `oncely_claim`, where `TypeOrmClaimRegistry` keeps the claims of the services sharing
 * this database, with its unique index on (`slot_hash`, `instance`) and its index on
 * `expires_at`, using the column types of the database it runs on.
 */
export class CreateOncelyClaimTable1801440000000 implements MigrationInterface {
  readonly name = 'CreateOncelyClaimTable1801440000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = recordDialectOf(queryRunner.connection.options.type);
    await queryRunner.createTable(
      new Table({
        name: claimTableName,
        columns: claimColumns(dialect).map((column) => ({
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
          {
            name: claimSlotInstanceIndexName,
            columnNames: ['slot_hash', 'instance'],
            isUnique: true,
          },
          { name: claimExpiresAtIndexName, columnNames: ['expires_at'] },
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable(claimTableName, true);
  }
}
