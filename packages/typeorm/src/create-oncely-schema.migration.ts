import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import {
  claimColumns,
  claimExpiresAtIndexName,
  claimSlotInstanceIndexName,
  claimTableName,
} from './claim-table.js';
import { recordDialectOf } from './record-dialect.js';
import {
  expiresAtIndexName,
  keyHashIndexName,
  recordColumns,
  recordTableName,
} from './record-table.js';
import { tableColumnOptions } from './table-column-options.js';

/**
 * Creates oncely's schema, using the column types of the database it runs on:
 * `oncely_idempotency_record` (unique index on `key_hash`, index on `expires_at`) and
 * `oncely_claim`, where `TypeOrmClaimRegistry` keeps the claims of the services sharing the
 * database (unique index on `slot_hash` and `instance`, index on `expires_at`).
 */
export class CreateOncelySchema1796256000000 implements MigrationInterface {
  readonly name = 'CreateOncelySchema1796256000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = recordDialectOf(queryRunner.connection.options.type);
    await queryRunner.createTable(
      new Table({
        name: recordTableName,
        columns: recordColumns(dialect).map(tableColumnOptions),
        indices: [
          { name: keyHashIndexName, columnNames: ['key_hash'], isUnique: true },
          { name: expiresAtIndexName, columnNames: ['expires_at'] },
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: claimTableName,
        columns: claimColumns(dialect).map(tableColumnOptions),
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
    await queryRunner.dropTable(recordTableName, true);
  }
}
