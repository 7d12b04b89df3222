import type { Redis } from 'ioredis';
import {
  InvalidRedisOptionError,
  RedisFlightCoordinator,
  RedisIdempotencyRecordAdmin,
  RedisIdempotencyRecordStore,
  RedisRecordQuota,
} from '@oncely/redis';
import { connect } from '../support/redis-test-keys.js';

describe('keyPrefix, checked the same way by every adapter', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });

  afterAll(() => redis.quit());

  it.each([
    [
      'RedisFlightCoordinator',
      (prefix: string) => new RedisFlightCoordinator(redis, { keyPrefix: prefix }),
    ],
    [
      'RedisIdempotencyRecordStore',
      (prefix: string) => new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix }),
    ],
    [
      'RedisIdempotencyRecordAdmin',
      (prefix: string) => new RedisIdempotencyRecordAdmin(redis, { keyPrefix: prefix }),
    ],
    ['RedisRecordQuota', (prefix: string) => new RedisRecordQuota(redis, { keyPrefix: prefix })],
  ])('%s refuses a prefix with braces, naming the option and the fix', (_name, create) => {
    let thrown: unknown;
    try {
      create('tenant-{1}:');
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(InvalidRedisOptionError);
    expect(thrown).toMatchObject({
      code: 'invalid_redis_option',
      option: 'keyPrefix',
      message: expect.stringContaining('Choose a prefix without braces.'),
    });
  });
});
