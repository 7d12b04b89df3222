import { createOncelyEngine, type OncelyEngine } from '@oncely/core';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import {
  exitAfterFailedBoot,
  killAllWorkers,
  requireService,
  services,
  spawnWorker,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const APP = fileURLToPath(new URL('./fixtures/failed-start.app.ts', import.meta.url));

/**
 * A rejected `oncely.start()` closes what oncely owns (the clients of adapters built from a URL,
 * their subscriber connections): an app whose main handles the rejection without
 * `process.exit` ends by itself.
 */
describe('an Express app whose oncely.start() rejects', () => {
  const keyPrefix = `oncely-failstart-${randomUUID().slice(0, 8)}:`;
  let redis: Redis;
  let orders: OncelyEngine;

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis({ ...services.redis });
    // Another service, holding the operation the app claims, where the app's records go.
    orders = createOncelyEngine({
      namespace: 'shop',
      service: 'orders-api',
      store: new RedisIdempotencyRecordStore(redis, { keyPrefix }),
      logger: false,
    });
    orders.defineRoute('POST /orders/capture', {
      idempotent: { operation: 'payment-capture', scope: 'user.tenantId' },
    });
    await orders.registerClaims();
  });

  afterAll(async () => {
    await killAllWorkers();
    await orders?.close();
    await redis?.quit();
  });

  it.each([
    ['record-table', 'RecordTableNotMigratedError'],
    ['foreign-claim', 'ForeignClaimError'],
  ])(
    '%s: the process exits 1 by itself (%s)',
    async (failure, errorName) => {
      const worker = spawnWorker(APP, { args: [failure, keyPrefix] });
      expect(await exitAfterFailedBoot(worker)).toEqual({
        failed: errorName,
        code: 1,
        signal: null,
      });
    },
    60_000,
  );
});
