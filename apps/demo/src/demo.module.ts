import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OncelyModule, type OncelyModuleFactoryOptions } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { DEMO_CONFIG } from './config/demo-config.token.js';
import type { DemoConfig } from './config/demo-config.js';
import { demoDataSourceOptions } from './database/demo-data-source.options.js';
import { DecisionFeed } from './decisions/decision-feed.service.js';
import { DecisionsController } from './decisions/decisions.controller.js';
import { DocumentsController } from './documents/documents.controller.js';
import { DemoRedis } from './health/demo-redis.js';
import { HealthController } from './health/health.controller.js';
import { DailySettlementModule } from './jobs/daily-settlement.module.js';
import { SqlSettlementLedger } from './jobs/sql-settlement.ledger.js';
import { OrdersController } from './orders/orders.controller.js';
import { PaymentsController } from './payments/payments.controller.js';
import { ProblemDetailsFilter } from './problems/problem-details.filter.js';
import { ReportsController } from './reports/reports.controller.js';
import { ExecutionStats } from './stats/execution-stats.service.js';
import { StatsController } from './stats/stats.controller.js';

/** The service owning the demo's claims (apps/demo/oncely.registry.yaml). */
export const DEMO_SERVICE = 'oncely-demo';

/** The body validation oncely runs before building keys; the same as the app's ValidationPipe. */
export const DEMO_VALIDATION = {
  validator: { whitelist: true, forbidNonWhitelisted: true },
  transformer: { enableImplicitConversion: false },
} as const;

/** Shared by the app and oncely: the Redis client (if any) and the decision feed. */
@Module({})
class DemoInfrastructureModule {
  static register(config: DemoConfig): DynamicModule {
    return {
      module: DemoInfrastructureModule,
      providers: [
        { provide: DEMO_CONFIG, useValue: config },
        { provide: DemoRedis, useFactory: () => new DemoRedis(config.redisUrl) },
        DecisionFeed,
      ],
      exports: [DEMO_CONFIG, DemoRedis, DecisionFeed],
    };
  }
}

/**
 * The demo app. Stores follow the configuration: the SQLite file and the in-memory coordinator
 * by default, PostgreSQL/MySQL (`DATABASE_URL`) and Redis (`REDIS_URL`) when set. oncely's
 * records always live in the app's own database, next to the orders and payments.
 */
@Module({})
export class DemoModule {
  static register(config: DemoConfig): DynamicModule {
    const infrastructure = DemoInfrastructureModule.register(config);
    return {
      module: DemoModule,
      imports: [
        infrastructure,
        TypeOrmModule.forRoot(demoDataSourceOptions(config.database)),
        OncelyModule.forRootAsync({
          // Given here, not by the factory: `oncely registry` reads them without running it.
          namespace: config.namespace,
          service: DEMO_SERVICE,
          imports: [infrastructure],
          inject: [DataSource, DemoRedis, DecisionFeed],
          useFactory: (dataSource: DataSource, redis: DemoRedis, feed: DecisionFeed) =>
            oncelyOptions(config, dataSource, redis, feed),
        }),
        DailySettlementModule.register({
          node: `demo-${process.pid}`,
          ledger: {
            inject: [DataSource],
            useFactory: async (dataSource: DataSource) => {
              const ledger = new SqlSettlementLedger(
                dataSource,
                'demo_settlement_run',
                `demo-${process.pid}`,
              );
              await ledger.createTable();
              return ledger;
            },
          },
        }),
      ],
      controllers: [
        OrdersController,
        PaymentsController,
        ReportsController,
        DocumentsController,
        StatsController,
        HealthController,
        DecisionsController,
      ],
      providers: [ExecutionStats, { provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}

function oncelyOptions(
  config: DemoConfig,
  dataSource: DataSource,
  redis: DemoRedis,
  feed: DecisionFeed,
): OncelyModuleFactoryOptions {
  if (!redis.client) {
    new Logger('Demo').log(
      'No REDIS_URL: SingleFlight uses the in-memory coordinator, which protects this one process only.',
    );
  }
  return {
    store: new TypeOrmIdempotencyRecordStore(dataSource),
    ...(redis.client
      ? {
          coordinator: new RedisFlightCoordinator(redis.client, {
            keyPrefix: config.redisKeyPrefix,
          }),
        }
      : { allowInMemory: true }),
    validation: DEMO_VALIDATION,
    events: feed.listener,
  };
}
