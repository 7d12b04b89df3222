import { withIdempotencyRecords } from '@oncely/typeorm';
import type { DataSourceOptions } from 'typeorm';
import type { DemoDatabase } from '../config/demo-config.js';
import { Order } from '../orders/order.entity.js';
import { Payment } from '../payments/payment.entity.js';
import { CreateDemoTables1767312000000 } from './create-demo-tables.migration.js';

/**
 * The demo's TypeORM options: its two business tables plus oncely's record table
 * (`withIdempotencyRecords`), all created by migrations that run at start-up, on SQLite
 * (better-sqlite3), PostgreSQL or MySQL/MariaDB.
 */
export function demoDataSourceOptions(database: DemoDatabase): DataSourceOptions {
  const common = {
    entities: [Order, Payment],
    migrations: [CreateDemoTables1767312000000],
    migrationsRun: true,
    synchronize: false,
    logging: false,
  } satisfies Partial<DataSourceOptions>;
  switch (database.kind) {
    case 'sqlite':
      return withIdempotencyRecords({
        ...common,
        type: 'better-sqlite3',
        database: database.file,
        // WAL lets readers (the health check, the demo's own tests) run while a transaction writes.
        enableWAL: true,
      });
    case 'postgres':
      return withIdempotencyRecords({
        ...common,
        type: 'postgres',
        url: database.url,
        ...(database.schema && { schema: database.schema }),
        poolSize: 20,
      });
    case 'mysql':
      return withIdempotencyRecords({ ...common, type: 'mysql', url: database.url, poolSize: 20 });
  }
}
