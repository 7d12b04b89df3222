import {
  Body,
  Controller,
  Get,
  Header,
  Headers,
  Module,
  Param,
  Post,
  UseGuards,
  type DynamicModule,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createPrometheusListener, type OncelyEvent } from '@oncely/core';
import { IdempotencyManager, IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { nextParentMessage, reportToParent, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import { IsString } from 'class-validator';
import * as promClient from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { HeaderAuthGuard } from '../fixtures/orders.controller.js';

/**
 * One release of a payments service, in its own process: the parent boots one built with `v1`,
 * kills it, and boots the next one with `v2` and `previousVersions: ['v1']` on the same Redis and
 * PostgreSQL. Every execution writes a row to the payments table: the business truth the parent
 * counts.
 */
export interface DeployNodeConfig {
  readonly namespace: string;
  readonly keyPrefix: string;
  /** PostgreSQL schema holding the payments table (and the records table). */
  readonly schema: string;
  /** Where the idempotency records live. */
  readonly store: 'redis' | 'postgres';
  readonly version: string;
  readonly previousVersions?: readonly string[];
  readonly leaseTtl: number;
  /** The `service` option; the namespace's default when left out. */
  readonly service?: string;
  /** The `serviceAliases` option; none when left out. */
  readonly serviceAliases?: readonly string[];
  /** Serve `GET /quotes/:id`, a `@SingleFlight` route caching its result for a minute. */
  readonly quotes?: true;
  /** Told to the parent with `ready`, to tell replicas apart. */
  readonly name?: string;
  /** The `onForeignClaim` option; the default (`fail`) when left out. */
  readonly onForeignClaim?: 'fail' | 'warn';
  /** The `claims` option's `ttl` and `renewEvery`; the defaults when left out. */
  readonly claims?: { readonly ttl: number; readonly renewEvery: number };
}

/** What the parent sends: open a held request's gate, or stop. */
interface ParentMessage {
  readonly release?: string;
  readonly stop?: true;
}

const config = JSON.parse(process.argv[2] ?? '{}') as DeployNodeConfig;
const payments = `"${config.schema}"."payments"`;

const dataSource = new DataSource(
  withIdempotencyRecords({
    type: 'postgres',
    ...services.postgres,
    schema: config.schema,
    poolSize: 10,
  }),
);
await dataSource.initialize();

class CapturePaymentDto {
  @IsString() orderId!: string;
  @IsString() amount!: string;
}

/** Requests sent with `x-hold: <name>` wait here, entered and reported, until released. */
const gates = new Map<string, () => void>();

async function holdIfAsked(hold: string | undefined): Promise<void> {
  if (!hold) return;
  const released = new Promise<void>((resolve) => gates.set(hold, resolve));
  reportToParent({ entered: hold });
  await released;
}

/** Writes the business row: one per execution of the handler. */
async function capture(
  manager: EntityManager,
  key: string,
  dto: CapturePaymentDto,
): Promise<{ paymentId: number; version: string; amount: string }> {
  const [row] = await manager.query<{ id: number }[]>(
    `INSERT INTO ${payments} (idempotency_key, order_id, amount, version) VALUES ($1, $2, $3, $4) RETURNING id`,
    [key, dto.orderId, dto.amount, config.version],
  );
  return { paymentId: row!.id, version: config.version, amount: dto.amount };
}

const route = {
  operation: 'payment-capture',
  scope: 'user.tenantId',
  version: config.version,
  ...(config.previousVersions && { previousVersions: config.previousVersions }),
} as const;

/** On PostgreSQL the row and the record commit together; on Redis the row is written alone. */
function paymentsController(): Type {
  if (config.store === 'postgres') {
    @Controller('payments')
    @UseGuards(HeaderAuthGuard)
    class TransactionalPaymentsController {
      @Post()
      @IdempotentKey({ ...route, transactional: true })
      async capture(
        @Body() dto: CapturePaymentDto,
        @Headers('idempotency-key') key: string,
        @Headers('x-hold') hold: string | undefined,
        @IdempotencyManager() manager: EntityManager,
      ) {
        await holdIfAsked(hold);
        return capture(manager, key, dto);
      }
    }
    return TransactionalPaymentsController;
  }
  @Controller('payments')
  @UseGuards(HeaderAuthGuard)
  class PaymentsController {
    @Post()
    @IdempotentKey(route)
    async capture(
      @Body() dto: CapturePaymentDto,
      @Headers('idempotency-key') key: string,
      @Headers('x-hold') hold: string | undefined,
    ) {
      await holdIfAsked(hold);
      return capture(dataSource.manager, key, dto);
    }
  }
  return PaymentsController;
}

/**
 * A quote per id, computed once and shared through the coordinator's result cache: each
 * execution writes a business row under `quote:<id>`.
 */
@Controller('quotes')
class QuotesController {
  @Get(':id')
  @SingleFlight({ operation: 'quote', target: 'params.id', input: [], resultTtl: 60_000 })
  async quote(@Param('id') id: string) {
    return capture(dataSource.manager, `quote:${id}`, { orderId: id, amount: '0.00' });
  }
}

const metrics = new promClient.Registry();

/** Serves this process's oncely metrics, as a Prometheus scrape reads them. */
@Controller('metrics')
class MetricsController {
  @Get()
  @Header('content-type', 'text/plain')
  scrape(): Promise<string> {
    return metrics.metrics();
  }
}

/** Every refusal for a foreign owner, and every foreign claim, is told to the parent as it happens. */
function reportForeignOwner(event: OncelyEvent): void {
  if (event.outcome !== 'foreign_owner' && event.outcome !== 'foreign_claim') return;
  const { mechanism, outcome, operation, key, owner, foreignOwner } = event;
  reportToParent({ event: { mechanism, outcome, operation, key, owner, foreignOwner } });
}

function oncely(): DynamicModule {
  const redis = { host: services.redis.host, port: services.redis.port };
  return OncelyModule.forRoot({
    namespace: config.namespace,
    ...(config.service !== undefined && { service: config.service }),
    ...(config.serviceAliases !== undefined && { serviceAliases: config.serviceAliases }),
    ...(config.onForeignClaim !== undefined && { onForeignClaim: config.onForeignClaim }),
    ...(config.claims !== undefined && { claims: config.claims }),
    events: [createPrometheusListener(promClient, { registers: [metrics] }), reportForeignOwner],
    coordinator: new RedisFlightCoordinator(redis, { keyPrefix: config.keyPrefix }),
    store:
      config.store === 'postgres'
        ? new TypeOrmIdempotencyRecordStore(dataSource)
        : new RedisIdempotencyRecordStore(redis, { keyPrefix: config.keyPrefix }),
    defaults: { leaseTtl: config.leaseTtl },
  });
}

@Module({
  imports: [oncely()],
  controllers: [
    paymentsController(),
    MetricsController,
    ...(config.quotes ? [QuotesController] : []),
  ],
})
class PaymentsModule {}

const app = await NestFactory.create(PaymentsModule, { logger: false });
try {
  await app.listen(0, '127.0.0.1');
} catch (error) {
  // A refused boot (a foreign claim) is told to the parent, which asserts on it.
  reportToParent({
    bootFailed: { name: (error as Error).name, message: (error as Error).message },
  });
  await dataSource.destroy();
  process.exit(1);
}
const address = app.getHttpServer().address() as { port: number };
reportToParent({ ready: config.name ?? config.version, port: address.port });

for (;;) {
  const message = await nextParentMessage<ParentMessage>();
  if (message.stop) break;
  if (message.release !== undefined) gates.get(message.release)?.();
}
for (const release of gates.values()) release();
await app.close();
await dataSource.destroy();
process.stdin.destroy();
