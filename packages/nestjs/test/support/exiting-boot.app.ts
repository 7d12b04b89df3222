// An app on Redis (adapters built from a URL, so oncely creates their clients) whose boot fails,
// started by a main.ts that handles the rejection without `process.exit`: the process must end
// by itself. argv (after the app's file name): failure, boot (`listen` | `testing`), module (`forRoot` | `forRootAsync`),
// key prefix.
// `record-table`: the TypeORM record table was never migrated (found while the app is created).
// `foreign-claim`: another service already claims the route's operation (found at bootstrap).
// `route-option`: a route option the store cannot honour (found at discovery).
// `module-option`: a module option refused once the adapters are built (found while the app is
// created).
import { Controller, Module, Post, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { IdempotentKey, OncelyModule, type OncelyModuleOptions } from '@oncely/nestjs';
import { redisUrl, reportFailedBoot, reportToParent } from '@oncely/testing-kit';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { DataSource } from 'typeorm';

const [failure, boot, moduleStyle, keyPrefix] = process.argv.slice(3) as [
  'record-table' | 'foreign-claim' | 'route-option' | 'module-option',
  'listen' | 'testing',
  'forRoot' | 'forRootAsync',
  string,
];

@Controller('payments')
class PaymentsController {
  @Post()
  @IdempotentKey({
    operation: 'payment-capture',
    scope: 'user.tenantId',
    // The Redis store runs no transactions: refused when the route is found.
    ...(failure === 'route-option' && { transactional: true }),
  })
  capture() {
    return {};
  }
}

async function moduleOptions(): Promise<OncelyModuleOptions> {
  return {
    namespace: 'shop',
    service: 'billing-api',
    coordinator: new RedisFlightCoordinator(redisUrl(), { keyPrefix }),
    store:
      failure === 'record-table'
        ? new TypeOrmIdempotencyRecordStore(
            await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize(),
          )
        : new RedisIdempotencyRecordStore(redisUrl(), { keyPrefix }),
    ...(failure === 'module-option' && { bootTimeout: 0 }),
  };
}

function oncelyModule(): DynamicModule | Promise<DynamicModule> {
  if (moduleStyle === 'forRootAsync') {
    return OncelyModule.forRootAsync({
      namespace: 'shop',
      service: 'billing-api',
      useFactory: moduleOptions,
    });
  }
  return moduleOptions().then((options) => OncelyModule.forRoot(options));
}

@Module({ imports: [await oncelyModule()], controllers: [PaymentsController] })
class AppModule {}

async function bootstrap(): Promise<void> {
  if (boot === 'testing') {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.createNestApplication().init();
  } else {
    // Nest's default (abortOnError) would end the process itself on a failure while creating it.
    const app = await NestFactory.create(AppModule, { abortOnError: false, logger: false });
    await app.listen(0);
  }
  reportToParent({ booted: true });
}

try {
  await bootstrap();
} catch (error) {
  reportFailedBoot(error);
}
