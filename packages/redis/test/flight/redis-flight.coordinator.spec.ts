import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RedisFlightCoordinator, InvalidRedisOptionError } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import { deleteKeys, eventually, scanKeys, uniquePrefix } from '../support/redis-test-keys.js';

// The redis project's testTimeout in jest.config.ts is not applied (Jest reads it globally).
jest.setTimeout(60_000);

/**
 * A wait longer than the test may last: only a notice ends it in time. A notice is published only
 * to a key a follower's busy `acquire` flagged as waited for, so each of these tests makes one.
 */
const noticeOnly = 120_000;

/** The hash tag Redis Cluster hashes: from the first `{` to the next `}`, if not empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe('RedisFlightCoordinator', () => {
  const prefix = uniquePrefix('coordinator');
  let redis: Redis;
  let coordinator: RedisFlightCoordinator;

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
    coordinator = new RedisFlightCoordinator(redis, { keyPrefix: prefix, commandTimeout: 10_000 });
    await coordinator.connect();
  });

  afterAll(async () => {
    await coordinator.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  describe('keys', () => {
    it.each(['plain', 'a}b', '}leading', 'x{y}z', '{}', '100%{', 'ключ{'])(
      'keeps the key of %j under a non-empty hash tag that is the whole business key',
      (businessKey) => {
        const key = flightKey('oncely:', businessKey);

        expect(hashTag(key)).not.toBe(key);
        expect(hashTag(key)).toBe(hashTag(flightKey('other:', businessKey)));
      },
    );

    it('maps distinct business keys to distinct keys even when they differ only by escapes', () => {
      expect(flightKey('p:', '{')).not.toBe(flightKey('p:', '%7B'));
    });

    it('refuses a key prefix carrying its own hash tag', () => {
      expect(() => new RedisFlightCoordinator(redis, { keyPrefix: 'app{1}:' })).toThrow(
        InvalidRedisOptionError,
      );
    });

    it('keeps lease and outcome in one key under the escaped hash tag, nothing else', async () => {
      const key = `braces}{${randomUUID()}`;
      const stored = flightKey(prefix, key);
      expect(stored).toBe(`${prefix}{braces%7D%7B${key.slice(8)}}:flight`);
      const leader = await coordinator.acquire(key, 'owner-1', 10_000);
      expect(leader.kind).toBe('leader');
      expect(await redis.get(stored)).toBe('L0owner-1');

      await coordinator.complete(key, 'owner-1', { kind: 'result', payload: 'r', ttlMs: 10_000 });

      expect(await redis.get(stored)).toBe('Rr');
      const pttl = await redis.pttl(stored);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(10_000);
      expect(await scanKeys(redis, `${prefix}{braces*`)).toEqual([stored]);
    });
  });

  describe('owner checks', () => {
    it('never lets another owner renew, complete or release a live lease', async () => {
      const key = randomUUID();
      const stored = flightKey(prefix, key);
      await coordinator.acquire(key, 'holder', 10_000);

      expect(await coordinator.renew(key, 'intruder', 10_000)).toBe(false);
      expect(
        await coordinator.complete(key, 'intruder', { kind: 'result', payload: 'x', ttlMs: 1000 }),
      ).toBe(false);
      expect(await coordinator.release(key, 'intruder')).toBe(false);
      // An owner token that is a prefix or suffix of the holder's is no match either.
      expect(await coordinator.release(key, 'hold')).toBe(false);
      expect(await coordinator.release(key, 'older')).toBe(false);

      expect(await redis.get(stored)).toBe('L0holder');
      expect(await coordinator.release(key, 'holder')).toBe(true);
      expect(await redis.exists(stored)).toBe(0);
    });

    it('stores nothing when the lease was lost before complete', async () => {
      const key = randomUUID();
      const stored = flightKey(prefix, key);
      await coordinator.acquire(key, 'holder', 10_000);
      await redis.del(stored);

      const completed = await coordinator.complete(key, 'holder', {
        kind: 'error',
        payload: 'e',
        ttlMs: 10_000,
      });

      expect(completed).toBe(false);
      expect(await redis.exists(stored)).toBe(0);
    });

    it('does not store an outcome whose TTL is 0, yet frees the lease', async () => {
      const key = randomUUID();
      await coordinator.acquire(key, 'holder', 10_000);

      await coordinator.complete(key, 'holder', { kind: 'result', payload: 'r', ttlMs: 0 });

      expect(await redis.exists(flightKey(prefix, key))).toBe(0);
      expect((await coordinator.acquire(key, 'next', 10_000)).kind).toBe('leader');
    });
  });

  describe('fencing', () => {
    it('keeps growing after the lease expired, with no counter key', async () => {
      const key = randomUUID();
      const first = await coordinator.acquire(key, 'first', 50);
      await eventually(async () => (await redis.exists(flightKey(prefix, key))) === 0, 'expiry');

      const second = await coordinator.acquire(key, 'second', 10_000);

      expect(first.kind).toBe('leader');
      expect(second.kind).toBe('leader');
      if (first.kind !== 'leader' || second.kind !== 'leader') return;
      expect(second.fence).toBeGreaterThan(first.fence);
      expect(Number.isSafeInteger(second.fence)).toBe(true);
    });
  });

  describe('clients', () => {
    it('defines its scripts once on a client shared by several coordinators', () => {
      const names = Object.keys(redis).filter((name) => name.startsWith('oncely_flight_'));
      const before = names.map((name) => (redis as unknown as Record<string, unknown>)[name]);

      const another = new RedisFlightCoordinator(redis, {
        keyPrefix: prefix,
        commandTimeout: 10_000,
      });
      const after = names.map((name) => (redis as unknown as Record<string, unknown>)[name]);
      void another.close();

      expect(names.filter((name) => !name.endsWith('Buffer'))).toHaveLength(7);
      expect(after).toEqual(before);
      after.forEach((command, i) => expect(command).toBe(before[i]));
    });

    it('closes the client it created but never one it was given', async () => {
      const given = new Redis(services.redis);
      const borrowing = new RedisFlightCoordinator(given, {
        keyPrefix: prefix,
        commandTimeout: 10_000,
      });
      const owning = new RedisFlightCoordinator(services.redis, {
        keyPrefix: prefix,
        commandTimeout: 10_000,
      });
      await borrowing.acquire(randomUUID(), 'o', 1000);
      await owning.acquire(randomUUID(), 'o', 1000);

      await borrowing.close();
      await owning.close();

      expect(given.status).toBe('ready');
      expect(await given.ping()).toBe('PONG');
      await given.quit();
    });

    it('creates its client from a redis:// URL and closes it and the subscriber', async () => {
      const name = `oncely-url-${randomUUID().slice(0, 8)}`;
      const connections = async () =>
        ((await redis.client('LIST')) as string)
          .split('\n')
          .filter((line) => line.includes(` name=${name} `)).length;
      const { host, port } = services.redis;
      const owning = new RedisFlightCoordinator(
        `redis://${host}:${port}/0?connectionName=${name}`,
        { keyPrefix: prefix, commandTimeout: 10_000 },
      );
      await owning.connect();
      // The command client and its duplicate for notices.
      expect(await connections()).toBe(2);

      await owning.close();
      await eventually(async () => (await connections()) === 0, 'both connections to close');
    });

    it('refuses a string that is not a redis:// or rediss:// URL', () => {
      expect(() => new RedisFlightCoordinator('127.0.0.1:6379')).toThrow(InvalidRedisOptionError);
    });

    it('opens one subscriber connection per client, whatever the number of coordinators', async () => {
      const name = `oncely-sub-${randomUUID().slice(0, 8)}`;
      const shared = new Redis({ ...services.redis, connectionName: name });
      const coordinators = [1, 2, 3].map(
        () => new RedisFlightCoordinator(shared, { keyPrefix: prefix, commandTimeout: 10_000 }),
      );
      const subscribers = async () =>
        ((await redis.client('LIST')) as string)
          .split('\n')
          .filter((line) => line.includes(`name=${name}`) && / sub=[1-9]/.test(line)).length;

      await Promise.all(coordinators.map((c) => c.acquire(randomUUID(), 'o', 1000)));
      await eventually(async () => (await subscribers()) === 1, 'the subscriber');
      await Promise.all(coordinators.map((c) => c.waitForNotice(randomUUID(), 10)));
      expect(await subscribers()).toBe(1);

      await coordinators[0]!.close();
      await coordinators[1]!.close();
      expect(await subscribers()).toBe(1);
      await coordinators[2]!.close();
      await eventually(async () => (await subscribers()) === 0, 'the subscriber to close');
      await shared.quit();
    });
  });

  describe('waitForNotice', () => {
    it('resolves on the completion notice of its key only', async () => {
      const key = randomUUID();
      const other = randomUUID();
      await coordinator.acquire(key, 'leader', 10_000);
      await coordinator.acquire(other, 'leader', 10_000);
      await coordinator.acquire(key, 'follower', 10_000);
      await coordinator.acquire(other, 'follower', 10_000);
      let woken = false;
      const waiting = coordinator.waitForNotice(key, noticeOnly).then(() => (woken = true));
      await eventually(() => coordinator.waitingKeys === 1, 'the waiter');

      await coordinator.complete(other, 'leader', { kind: 'result', payload: 'o', ttlMs: 1000 });
      await coordinator.acquire(randomUUID(), 'x', 1000);
      expect(woken).toBe(false);

      await coordinator.complete(key, 'leader', { kind: 'result', payload: 'k', ttlMs: 1000 });
      await waiting;
      expect(coordinator.waitingKeys).toBe(0);
    });

    it('resolves on a release notice', async () => {
      const key = randomUUID();
      await coordinator.acquire(key, 'leader', 10_000);
      await coordinator.acquire(key, 'follower', 10_000);
      const waiting = coordinator.waitForNotice(key, noticeOnly);
      await eventually(() => coordinator.waitingKeys === 1, 'the waiter');

      await coordinator.release(key, 'leader');

      await expect(waiting).resolves.toBeUndefined();
      expect(coordinator.waitingKeys).toBe(0);
    });

    it('resolves at its timeout and on abort, leaving no waiter behind', async () => {
      const controller = new AbortController();
      const aborted = coordinator.waitForNotice(randomUUID(), 30_000, controller.signal);
      const timedOut = coordinator.waitForNotice(randomUUID(), 5);
      expect(coordinator.waitingKeys).toBe(2);

      controller.abort();
      await aborted;
      await timedOut;

      expect(coordinator.waitingKeys).toBe(0);
      await expect(
        coordinator.waitForNotice(randomUUID(), 30_000, AbortSignal.abort()),
      ).resolves.toBeUndefined();
      expect(coordinator.waitingKeys).toBe(0);
    });

    it('wakes every waiter of the key, in this and other coordinators of the process', async () => {
      const key = randomUUID();
      const sibling = new RedisFlightCoordinator(services.redis, {
        keyPrefix: prefix,
        commandTimeout: 10_000,
      });
      await coordinator.acquire(key, 'leader', 10_000);
      await coordinator.acquire(key, 'follower', 10_000);
      await sibling.connect();
      const waits = [
        coordinator.waitForNotice(key, noticeOnly),
        coordinator.waitForNotice(key, noticeOnly),
        sibling.waitForNotice(key, noticeOnly),
      ];
      await eventually(() => sibling.waitingKeys === 1, 'the sibling waiter');

      await coordinator.complete(key, 'leader', { kind: 'result', payload: 'k', ttlMs: 1000 });

      await Promise.all(waits);
      expect(coordinator.waitingKeys).toBe(0);
      await sibling.close();
    });

    it('wakes waiters whose notice was published while the subscriber reconnected', async () => {
      const name = `oncely-kill-${randomUUID().slice(0, 8)}`;
      const client = new Redis({ ...services.redis, connectionName: name });
      const watcher = new RedisFlightCoordinator(client, { keyPrefix: prefix });
      await watcher.connect();
      const [released, stillHeld] = [randomUUID(), randomUUID()];
      await coordinator.acquire(released, 'leader', 10_000);
      await coordinator.acquire(stillHeld, 'leader', 10_000);
      let woken = false;
      const waiting = watcher.waitForNotice(released, 60_000).then(() => (woken = true));
      const control = new AbortController();
      const otherWait = watcher.waitForNotice(stillHeld, 60_000, control.signal);
      const subscriberId = ((await redis.client('LIST')) as string)
        .split('\n')
        .find((line) => line.includes(`name=${name}`) && / sub=[1-9]/.test(line))
        ?.match(/^id=(\d+)/)?.[1];
      expect(subscriberId).toBeDefined();

      await redis.client('KILL', 'ID', subscriberId!);
      await coordinator.release(released, 'leader');
      expect(woken).toBe(false);

      await waiting;
      expect(watcher.waitingKeys).toBe(1);
      control.abort();
      await otherWait;
      await coordinator.release(stillHeld, 'leader');
      await watcher.close();
      await client.quit();
    });
  });
});
