import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';

/**
 * A payment, unique per tenant and `paymentRequestNo`: even a request that slips past the
 * idempotency layer (another client key, an expired record) cannot charge twice.
 */
@Entity({ name: 'demo_payment' })
@Unique('UQ_demo_payment_tenant_request_no', ['tenantId', 'paymentRequestNo'])
export class Payment {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'tenant_id', type: 'varchar', length: 64 })
  tenantId!: string;

  @Column({ name: 'payment_request_no', type: 'varchar', length: 64 })
  paymentRequestNo!: string;

  @Column({ name: 'order_id', type: 'varchar', length: 128 })
  orderId!: string;

  /** Decimal text exactly as received (`"100.00"`): money never goes through a float. */
  @Column({ type: 'varchar', length: 32 })
  amount!: string;

  @Column({ type: 'varchar', length: 3 })
  currency!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: string;

  @Column({ name: 'execution_id', type: 'varchar', length: 36 })
  executionId!: string;

  @Column({ name: 'created_at', type: 'varchar', length: 32 })
  createdAt!: string;
}
