import type { Redis } from 'ioredis';
import { idempotencyRecordStoreContract } from '@oncely/core/testing';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService } from '@oncely/testing-kit';
import { connect, deleteKeys, sleep, uniquePrefix } from '../support/redis-test-keys.js';

describe('RedisIdempotencyRecordStore meets the IdempotencyRecordStore contract', () => {
  const runPrefix = uniquePrefix('record-contract');
  let redis: Redis;
  let harnesses = 0;

  beforeAll(async () => {
    await requireService('redis');
    redis = connect();
  });

  afterAll(async () => {
    await deleteKeys(redis, runPrefix);
    await redis.quit();
  });

  const cases = idempotencyRecordStoreContract(
    async () => {
      const keyPrefix = `${runPrefix}${++harnesses}:`;
      return {
        store: new RedisIdempotencyRecordStore(redis, { keyPrefix }),
        // Redis keeps its own time (TIME, key TTLs): there is no clock to move, only to wait for.
        advance: sleep,
        cleanup: () => deleteKeys(redis, keyPrefix),
      };
    },
    // Real time: a lease must outlast the gap between two calls of a case on a loaded CI box (the
    // 500 ms default once expired between a begin and the next one).
    { expiresNatively: true, concurrency: 20, leaseTtlMs: 1500, retentionMs: 3000 },
  );

  for (const c of cases) it(c.name, c.run);
});
