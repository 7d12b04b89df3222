import { EntitySchema } from 'typeorm';

/** An order, as `CreateOrders1767312000000` creates its table. */
export const Order = new EntitySchema({
  name: 'Order',
  tableName: 'shop_order',
  columns: {
    id: { type: 'uuid', primary: true },
    tenantId: { type: 'varchar', name: 'tenant_id' },
    cartId: { type: 'varchar', name: 'cart_id' },
    qty: { type: 'int' },
    reservation: { type: 'varchar' },
  },
});
