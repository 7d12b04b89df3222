import { Module } from '@nestjs/common';
import { OncelyModule } from '@oncely/nestjs';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { OrdersController } from './orders/orders.controller.js';
import { OrdersService } from './orders/orders.service.js';
import { Warehouse } from './orders/warehouse.js';

/** This app's keys in a Redis other services share: its own prefix, never another's keys. */
const keyPrefix = 'compat-nest12:';

@Module({
  imports: [
    OncelyModule.forRootAsync({
      // A factory, so nothing connects while the module is imported: each adapter creates its
      // ioredis client from the URL when oncely starts, and oncely quits it on shutdown.
      useFactory: () => {
        const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
        return {
          namespace: 'shop',
          coordinator: new RedisFlightCoordinator(url, { keyPrefix }),
          store: new RedisIdempotencyRecordStore(url, { keyPrefix }),
        };
      },
    }),
  ],
  controllers: [OrdersController],
  providers: [OrdersService, Warehouse],
})
export class AppModule {}
