import { jest } from '@jest/globals';
import { flightCoordinatorContract, registerContractCases } from '@oncely/core/testing';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { deleteKeys, sleep, uniquePrefix } from '../support/redis-test-keys.js';

// The redis project's testTimeout in jest.config.ts is not applied (Jest reads it globally).
jest.setTimeout(60_000);

describe('RedisFlightCoordinator meets the FlightCoordinator contract', () => {
  const prefix = uniquePrefix('contract');
  let redis: Redis;

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  describe('on a client it creates', () => {
    registerContractCases(
      flightCoordinatorContract(() => {
        const coordinator = new RedisFlightCoordinator(services.redis, {
          keyPrefix: prefix,
          commandTimeout: 10_000,
        });
        return { coordinator, advance: sleep, cleanup: () => coordinator.close() };
      }),
      it,
    );
  });

  describe('on a client it is given', () => {
    registerContractCases(
      flightCoordinatorContract(() => {
        const coordinator = new RedisFlightCoordinator(redis, {
          keyPrefix: prefix,
          commandTimeout: 10_000,
        });
        return { coordinator, advance: sleep, cleanup: () => coordinator.close() };
      }),
      it,
    );
  });
});
