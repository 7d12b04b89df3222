export class CreateOrders1767312000000 {
  name = 'CreateOrders1767312000000';

  async up(queryRunner) {
    await queryRunner.query(
      `CREATE TABLE shop_order (
        id uuid PRIMARY KEY,
        tenant_id varchar NOT NULL,
        cart_id varchar NOT NULL,
        qty int NOT NULL,
        reservation varchar NOT NULL
      )`,
    );
  }

  async down(queryRunner) {
    await queryRunner.query('DROP TABLE shop_order');
  }
}
