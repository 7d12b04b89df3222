import { withIdempotencyRecords } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { CreateOrders1767312000000 } from './create-orders.migration.js';
import { Order } from './order.entity.js';

/**
 * The app's DataSource. `withIdempotencyRecords` adds oncely's record entity and its migration
 * to the app's own, and `migrationsRun` applies whatever is pending when it initialises.
 */
export function createDataSource(url) {
  return new DataSource(
    withIdempotencyRecords({
      type: 'postgres',
      url,
      entities: [Order],
      migrations: [CreateOrders1767312000000],
      migrationsRun: true,
    }),
  );
}
