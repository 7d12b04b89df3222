import { Table, TableUnique, type MigrationInterface, type QueryRunner } from 'typeorm';

const id = { name: 'id', type: 'varchar', length: '36', isPrimary: true };
const text = (name: string, length: number, isNullable = false) => ({
  name,
  type: 'varchar',
  length: String(length),
  isNullable,
});

/** The demo's business tables, each with its own unique constraint. */
export class CreateDemoTables1767312000000 implements MigrationInterface {
  readonly name = 'CreateDemoTables1767312000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'demo_order',
        columns: [
          id,
          text('tenant_id', 64),
          text('cart_id', 128),
          { name: 'items', type: 'text' },
          text('note', 500, true),
          text('execution_id', 36),
          text('created_at', 32),
        ],
        uniques: [
          new TableUnique({
            name: 'UQ_demo_order_tenant_cart',
            columnNames: ['tenant_id', 'cart_id'],
          }),
        ],
      }),
      true,
    );
    await queryRunner.createTable(
      new Table({
        name: 'demo_payment',
        columns: [
          id,
          text('tenant_id', 64),
          text('payment_request_no', 64),
          text('order_id', 128),
          text('amount', 32),
          text('currency', 3),
          text('status', 16),
          text('execution_id', 36),
          text('created_at', 32),
        ],
        uniques: [
          new TableUnique({
            name: 'UQ_demo_payment_tenant_request_no',
            columnNames: ['tenant_id', 'payment_request_no'],
          }),
        ],
      }),
      true,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('demo_payment', true);
    await queryRunner.dropTable('demo_order', true);
  }
}
