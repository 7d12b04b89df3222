// One demo process for the chaos suite: the demo app exactly as built (apps/demo/dist), with
// three test-only overrides taken from the environment, so no demo file needs a chaos switch:
// - CHAOS_EXEC_LOG: every handler execution is appended to this file (one operation per line)
//   before the handler works, so executions of a process that gets SIGKILLed are still counted;
// - CHAOS_REDIS_CLUSTER (host:port,…): the coordinator talks to a Redis Cluster instead of
//   REDIS_URL; CHAOS_LEASE_TTL_MS / CHAOS_WAIT_MS / CHAOS_COMMAND_TIMEOUT_MS: oncely's defaults;
// - CHAOS_MEMORY_FILE: process.memoryUsage() after a GC written there every 2.5 s, for the soak.
// Everything else (PORT, DATABASE_URL, DATABASE_SCHEMA, REDIS_URL, ONCELY_REDIS_PREFIX) is the
// demo's own configuration.
import 'reflect-metadata';
import { appendFileSync, writeFileSync } from 'node:fs';
import { ValidationPipe } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ONCELY_MODULE_OPTIONS } from '@oncely/nestjs';
import { RedisFlightCoordinator } from '@oncely/redis';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { Cluster, Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { demoConfigFromEnv } from '../../../apps/demo/dist/config/demo-config.js';
import { DecisionFeed } from '../../../apps/demo/dist/decisions/decision-feed.service.js';
import { DEMO_VALIDATION, DemoModule } from '../../../apps/demo/dist/demo.module.js';
import { DemoRedis } from '../../../apps/demo/dist/health/demo-redis.js';
import { ExecutionStats } from '../../../apps/demo/dist/stats/execution-stats.service.js';

const env = process.env;
const config = demoConfigFromEnv(env);

class LoggedExecutionStats extends ExecutionStats {
  recordExecution(operation) {
    super.recordExecution(operation);
    // Synchronous on purpose: the line must be on disk before the handler can be killed.
    if (env.CHAOS_EXEC_LOG) appendFileSync(env.CHAOS_EXEC_LOG, `${operation}\n`);
  }
}

function redisClient() {
  if (env.CHAOS_REDIS_CLUSTER) {
    const nodes = env.CHAOS_REDIS_CLUSTER.split(',').map((node) => {
      const [host, port] = node.split(':');
      return { host, port: Number(port) };
    });
    return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 2 } });
  }
  return config.redisUrl
    ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 })
    : undefined;
}

const client = redisClient();
const number = (name) => (env[name] ? Number(env[name]) : undefined);
const leaseTtl = number('CHAOS_LEASE_TTL_MS');
const wait = number('CHAOS_WAIT_MS');
const commandTimeout = number('CHAOS_COMMAND_TIMEOUT_MS');

const moduleRef = await Test.createTestingModule({ imports: [DemoModule.register(config)] })
  .overrideProvider(ExecutionStats)
  .useClass(LoggedExecutionStats)
  .overrideProvider(DemoRedis)
  .useValue({
    client,
    onApplicationShutdown: async () => client?.disconnect(),
  })
  .overrideProvider(ONCELY_MODULE_OPTIONS)
  .useFactory({
    inject: [DataSource, DecisionFeed],
    factory: (dataSource, feed) => ({
      namespace: config.namespace,
      store: new TypeOrmIdempotencyRecordStore(dataSource),
      coordinator: new RedisFlightCoordinator(client, {
        keyPrefix: config.redisKeyPrefix,
        ...(commandTimeout !== undefined && { commandTimeout }),
      }),
      validation: DEMO_VALIDATION,
      events: feed.listener,
      defaults: {
        ...(leaseTtl !== undefined && { leaseTtl }),
        ...(wait !== undefined && { wait }),
      },
    }),
  })
  .compile();

const app = moduleRef.createNestApplication({ logger: ['error'] });
app.enableShutdownHooks();
app.useGlobalPipes(
  new ValidationPipe({
    ...DEMO_VALIDATION.validator,
    transform: true,
    transformOptions: DEMO_VALIDATION.transformer,
  }),
);
await app.listen(config.port, '127.0.0.1');

if (env.CHAOS_MEMORY_FILE) {
  const file = env.CHAOS_MEMORY_FILE;
  // After a full collection (the runner passes --expose-gc), so the figure is what is retained.
  setInterval(() => {
    globalThis.gc?.();
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  }, 2_500).unref();
}
