import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';

export interface OrderItem {
  readonly sku: string;
  readonly qty: number;
}

/**
 * One order per cart and tenant: the unique constraint is the last line of defence when two
 * requests for one cart arrive with different idempotency keys.
 */
@Entity({ name: 'demo_order' })
@Unique('UQ_demo_order_tenant_cart', ['tenantId', 'cartId'])
export class Order {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'tenant_id', type: 'varchar', length: 64 })
  tenantId!: string;

  @Column({ name: 'cart_id', type: 'varchar', length: 128 })
  cartId!: string;

  @Column({ type: 'simple-json' })
  items!: OrderItem[];

  @Column({ type: 'varchar', length: 500, nullable: true })
  note!: string | null;

  @Column({ name: 'execution_id', type: 'varchar', length: 36 })
  executionId!: string;

  @Column({ name: 'created_at', type: 'varchar', length: 32 })
  createdAt!: string;
}
