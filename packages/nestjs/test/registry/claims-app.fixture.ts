import {
  Body,
  Controller,
  Injectable,
  Module,
  Post,
  type DynamicModule,
  type OnModuleInit,
} from '@nestjs/common';
import { IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';

/** Every provider factory, constructor and hook of the fixture that ran, in order. */
export const sideEffects: string[] = [];

/** Ports nothing listens on: a factory that ran would try them and fail (or hang). */
const UNREACHABLE = { host: '127.0.0.1', port: 1 };

@Injectable()
export class LedgerService implements OnModuleInit {
  constructor() {
    sideEffects.push('LedgerService constructed');
  }

  onModuleInit(): void {
    sideEffects.push('LedgerService.onModuleInit');
  }

  @IdempotentKey({
    operation: 'ledger-post',
    idempotencyKey: 'ignored',
    target: 'args.0.entryId',
    description: 'Posts one ledger entry',
  })
  async post(entry: { entryId: string }): Promise<string> {
    return entry.entryId;
  }
}

@Controller('orders')
export class OrdersController {
  @Post()
  @IdempotentKey({
    operation: 'order-create',
    scope: 'user.tenantId',
    description: 'Creates an order from a cart',
  })
  create(@Body() body: { cartId: string }) {
    return body;
  }

  @Post('quote')
  @SingleFlight({ operation: 'order-quote', input: 'body.cartId', resultTtl: 5_000 })
  quote(@Body() body: { cartId: string }) {
    return body;
  }
}

/** Its routes' claims are what a registry lists; its factories must never run while listing. */
@Module({})
export class ClaimsAppModule {
  static register(): DynamicModule {
    return {
      module: ClaimsAppModule,
      providers: [
        LedgerService,
        {
          provide: DataSource,
          useFactory: () => {
            sideEffects.push('DataSource factory');
            return new DataSource({ type: 'postgres', ...UNREACHABLE }).initialize();
          },
        },
        {
          provide: Redis,
          useFactory: () => {
            sideEffects.push('Redis factory');
            return new Redis({ ...UNREACHABLE, lazyConnect: true });
          },
        },
      ],
      exports: [DataSource, Redis],
      global: true,
    };
  }
}

/** The app: its oncely options come from a factory over a DataSource and a Redis client. */
@Module({
  imports: [
    ClaimsAppModule.register(),
    OncelyModule.forRootAsync({
      namespace: 'shop',
      service: '@acme/shop-api',
      defaults: { retention: 3_600_000 },
      inject: [DataSource, Redis],
      useFactory: (dataSource: DataSource, redis: Redis) => {
        sideEffects.push('OncelyModule options factory');
        return {
          store: new TypeOrmIdempotencyRecordStore(dataSource),
          coordinator: new RedisFlightCoordinator(redis),
        };
      },
    }),
  ],
  controllers: [OrdersController],
})
export class AppModule {}
