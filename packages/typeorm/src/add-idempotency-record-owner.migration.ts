import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { recordDialectOf } from './record-dialect.js';
import { ownerColumnName, recordColumns, recordTableName } from './record-table.js';

/**
 * Adds `owner` to `oncely_idempotency_record`: the service that claimed each record, so that a
 * service meeting another one's record under its key refuses it instead of replaying or
 * overwriting it. Nullable: rows written before have none and count as the caller's own. A table
 * created by `CreateIdempotencyRecordTable1767225600000` of this version already has the column,
 * which is then left as it is.
 */
export class AddIdempotencyRecordOwner1798761600000 implements MigrationInterface {
  readonly name = 'AddIdempotencyRecordOwner1798761600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasColumn(recordTableName, ownerColumnName)) return;
    const dialect = recordDialectOf(queryRunner.connection.options.type);
    const column = recordColumns(dialect).find(({ name }) => name === ownerColumnName);
    if (column === undefined) throw new Error(`No ${ownerColumnName} column is declared.`);
    await queryRunner.addColumn(
      recordTableName,
      new TableColumn({
        name: column.name,
        type: column.type,
        ...(column.length === undefined ? {} : { length: String(column.length) }),
        isNullable: true,
        ...(column.charset ? { charset: column.charset, collation: column.collation } : {}),
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (!(await queryRunner.hasColumn(recordTableName, ownerColumnName))) return;
    await queryRunner.dropColumn(recordTableName, ownerColumnName);
  }
}
