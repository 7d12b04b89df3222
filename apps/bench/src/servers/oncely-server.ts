/**
 * The bench handler behind `@SingleFlight` and `@IdempotentKey` (records on the Redis record
 * store or on PostgreSQL), plus the 200 ms route of the `coalesce` scenario. On PostgreSQL also
 * the routes that write an order row like `bare-pg-write`: in a transaction of their own beside
 * the record, and `transactional: true` (record and row in one transaction).
 */
import 'reflect-metadata';
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { IdempotencyManager, IdempotentKey, OncelyModule, SingleFlight } from '@oncely/nestjs';
import type { IdempotencyRecordStore } from '@oncely/core';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore, withIdempotencyRecords } from '@oncely/typeorm';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager } from 'typeorm';
import { acceptOrder, preciseNow } from './bench-handler.js';
import { createOrderTable, insertOrder, postgresConnection } from './business-row.js';
import { listen } from './listen.js';
import { serverConfigFromEnv } from './server-config.js';

const config = serverConfigFromEnv();
const redis = { host: '127.0.0.1', port: config.redisPort };
let slowExecutions = 0;
/** When each `/slow` request arrived and its response was written, by the bench's request id. */
const slowRequests: Record<string, { arrivedAt: number; writtenAt?: number }> = {};
/** When a `/slow` flight of this process got the result another process's leader stored. */
const slowWakeUps: number[] = [];
/** The `/slow` route's `namespace:operation:version`, as events name it. */
const SLOW_OPERATION = 'bench:bench-slow:v1';

@Controller()
class OncelyBenchController {
  @Post('flight')
  @SingleFlight({ operation: 'bench-flight', scope: 'headers.x-tenant' })
  flight(@Body() body: Record<string, unknown>) {
    return acceptOrder(body);
  }

  @Post('idem')
  @IdempotentKey({ operation: 'bench-idem', scope: 'headers.x-tenant' })
  idem(@Body() body: Record<string, unknown>) {
    return acceptOrder(body);
  }

  @Post('slow')
  @SingleFlight({ operation: 'bench-slow', scope: 'headers.x-tenant' })
  async slow(@Body() body: Record<string, unknown>) {
    slowExecutions += 1;
    await sleep(config.slowHandlerMs);
    return { ...acceptOrder(body), executedBy: process.pid, finishedAt: preciseNow() };
  }

  @Get('stats')
  stats() {
    return { slowExecutions, slowRequests, slowWakeUps };
  }
}

/** The records' (and the order rows') database, when the records are on PostgreSQL. */
async function postgresSource(): Promise<DataSource | undefined> {
  if (config.store !== 'postgres') return undefined;
  const source = new DataSource(withIdempotencyRecords(postgresConnection(config.postgresSchema)));
  await source.initialize();
  await createOrderTable(source, config.postgresSchema);
  await source.runMigrations();
  return source;
}

const postgres = await postgresSource();

function recordStore(): IdempotencyRecordStore {
  if (!postgres) return new RedisIdempotencyRecordStore(redis, { keyPrefix: config.keyPrefix });
  return new TypeOrmIdempotencyRecordStore(postgres);
}

@Controller()
class PostgresWriteController {
  /** The record beside the row: the row commits in its own transaction, as on `bare-pg-write`. */
  @Post('idem-write')
  @IdempotentKey({ operation: 'bench-idem-write', scope: 'headers.x-tenant' })
  async write(@Body() body: Record<string, unknown>) {
    const order = acceptOrder(body);
    await postgres!.transaction((manager) => insertOrder(manager, config.postgresSchema, order));
    return order;
  }

  /** Record and row in one transaction: the row is written through the call's manager. */
  @Post('idem-tx')
  @IdempotentKey({ operation: 'bench-idem-tx', scope: 'headers.x-tenant', transactional: true })
  async transactional(
    @Body() body: Record<string, unknown>,
    @IdempotencyManager() manager: EntityManager,
  ) {
    const order = acceptOrder(body);
    await insertOrder(manager, config.postgresSchema, order);
    return order;
  }
}

@Module({
  imports: [
    OncelyModule.forRoot({
      namespace: 'bench',
      coordinator: new RedisFlightCoordinator(redis, { keyPrefix: config.keyPrefix }),
      store: recordStore(),
      events: (event) => {
        // Runs on every call of every contender route: the cheap test first.
        if (event.outcome === 'shared' && event.operation === SLOW_OPERATION) {
          slowWakeUps.push(preciseNow());
        }
      },
    }),
  ],
  controllers: postgres
    ? [OncelyBenchController, PostgresWriteController]
    : [OncelyBenchController],
})
class OncelyBenchModule {}

function recordSlowResponses(request: IncomingMessage, response: ServerResponse, next: () => void) {
  const id = request.headers['x-bench-request'];
  if (typeof id === 'string') {
    const timing: { arrivedAt: number; writtenAt?: number } = { arrivedAt: preciseNow() };
    slowRequests[id] = timing;
    response.once('finish', () => (timing.writtenAt = preciseNow()));
  }
  next();
}

await listen(OncelyBenchModule, config.platform, (app) => {
  // Express only: the coalesce scenario runs on Express.
  if (config.platform === 'express') app.use(recordSlowResponses);
});
