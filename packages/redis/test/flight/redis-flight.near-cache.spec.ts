import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { SingleFlight, type AcquireOutcome } from '@oncely/core';
import {
  InvalidRedisOptionError,
  RedisFlightCoordinator,
  type RedisFlightCoordinatorOptions,
} from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import { deleteKeys, eventually, uniquePrefix } from '../support/redis-test-keys.js';

jest.setTimeout(60_000);

const payloadOf = (outcome: AcquireOutcome) =>
  outcome.kind === 'cached' || outcome.kind === 'failed' ? outcome.payload : outcome.kind;

/**
 * The near cache of `RedisFlightCoordinator`. Whether an answer came from memory is told by
 * changing the Redis key behind the coordinator's back (a raw SET or DEL publishes no notice):
 * a near-cached answer still shows the old value.
 */
describe('RedisFlightCoordinator near cache', () => {
  const prefix = uniquePrefix('near');
  const opened: Array<{ close(): Promise<unknown> } | Redis> = [];
  let redis: Redis;

  /** A coordinator on its own client: another process, as far as notices go. */
  async function process(options: Pick<RedisFlightCoordinatorOptions, 'nearCache'> = {}) {
    const client = new Redis({ ...services.redis, connectionName: `near-${randomUUID()}` });
    const coordinator = new RedisFlightCoordinator(client, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
      ...options,
    });
    opened.push(coordinator, client);
    await coordinator.connect();
    return { coordinator, client };
  }

  async function lead(
    coordinator: RedisFlightCoordinator,
    key: string,
    payload: string,
    ttlMs = 60_000,
  ) {
    const owner = `owner-${randomUUID()}`;
    const outcome = await coordinator.acquire(key, owner, 10_000);
    if (outcome.kind !== 'leader') throw new Error(`expected to lead, got ${outcome.kind}`);
    expect(await coordinator.complete(key, owner, { kind: 'result', payload, ttlMs })).toBe(true);
  }

  /** Replaces the stored result without a notice, so only Redis knows. */
  const overwrite = (key: string, payload: string) =>
    redis.set(flightKey(prefix, key), `R${payload}`, 'PX', 60_000);

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
  });

  afterAll(async () => {
    for (const resource of opened.reverse()) {
      if (resource instanceof Redis) resource.disconnect();
      else await resource.close();
    }
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('serves a result it stored or read from memory, and none with nearCache: false', async () => {
    const { coordinator: a } = await process();
    const { coordinator: b } = await process();
    const { coordinator: off } = await process({ nearCache: false });
    const key = randomUUID();
    await lead(a, key, 'first');
    expect(await b.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'first' });

    await overwrite(key, 'changed');

    expect(await a.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'first' });
    expect(await b.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'first' });
    expect(await off.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'changed' });
    expect(off.nearCacheSize).toBe(0);
  });

  it('peeks from memory alone, sending no command, and holds nothing under a lease, after an eviction or expiry, or with nearCache: false', async () => {
    const { coordinator: a, client } = await process();
    const { coordinator: b } = await process();
    const { coordinator: off } = await process({ nearCache: false });
    const { coordinator: operator } = await process({ nearCache: false });
    const key = randomUUID();
    const owner = `owner-${randomUUID()}`;
    expect((await a.acquire(key, owner, 10_000)).kind).toBe('leader');
    expect(a.peek(key)).toBeUndefined();
    expect(await a.complete(key, owner, { kind: 'result', payload: 'kept', ttlMs: 60_000 })).toBe(
      true,
    );
    expect(b.peek(key)).toBeUndefined();
    expect(await b.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'kept' });
    expect(await off.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'kept' });

    const sent = jest.spyOn(client, 'sendCommand');
    expect(a.peek(key)).toEqual({ kind: 'cached', payload: 'kept' });
    expect(sent).not.toHaveBeenCalled();
    // The spy sees what a round trip sends.
    await a.acquire(randomUUID(), 'o', 1000);
    expect(sent).toHaveBeenCalled();
    sent.mockRestore();
    expect(b.peek(key)).toEqual({ kind: 'cached', payload: 'kept' });
    expect(off.peek(key)).toBeUndefined();

    expect(await operator.evictResult(key)).toBe(true);
    await eventually(
      async () => a.peek(key) === undefined && b.peek(key) === undefined,
      'the eviction notice to drop both copies',
    );

    const short = randomUUID();
    await lead(a, short, 'short', 300);
    expect(a.peek(short)).toEqual({ kind: 'cached', payload: 'short' });
    await eventually(async () => (await redis.exists(flightKey(prefix, short))) === 0, 'expiry');
    expect(a.peek(short)).toBeUndefined();
  });

  it('never serves an outcome past its Redis TTL: after it, the next call leads', async () => {
    const { coordinator } = await process();
    const flight = new SingleFlight(coordinator, { resultTtl: 300 });
    const key = randomUUID();
    let runs = 0;
    const work = async () => ++runs;

    expect(await flight.run(key, work)).toEqual({ value: 1, source: 'executed' });
    expect(await flight.run(key, work)).toEqual({ value: 1, source: 'cached' });
    await eventually(async () => (await redis.exists(flightKey(prefix, key))) === 0, 'expiry');

    expect(await flight.run(key, work)).toEqual({ value: 2, source: 'executed' });
  });

  it('keeps a copy read from Redis no longer than the PTTL Redis reported', async () => {
    const { coordinator } = await process();
    const key = randomUUID();
    await redis.set(flightKey(prefix, key), 'Rshort', 'PX', 300);
    expect(await coordinator.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'short' });

    await eventually(async () => (await redis.exists(flightKey(prefix, key))) === 0, 'expiry');

    expect((await coordinator.acquire(key, 'o', 1000)).kind).toBe('leader');
  });

  it('drops a copy in every process when an operator evicts the result', async () => {
    const { coordinator: a } = await process();
    const { coordinator: b } = await process();
    const { coordinator: operator } = await process({ nearCache: false });
    const key = randomUUID();
    await lead(a, key, 'stale');
    expect(await b.acquire(key, 'o', 1000)).toEqual({ kind: 'cached', payload: 'stale' });

    expect(await operator.evictResult(key)).toBe(true);
    await overwrite(key, 'fresh');

    for (const [name, coordinator] of Object.entries({ a, b })) {
      await eventually(
        async () => payloadOf(await coordinator.acquire(key, 'o', 1000)) === 'fresh',
        `${name} to drop its copy`,
      );
    }
    expect(await operator.evictResult(key)).toBe(true);
    expect(await operator.evictResult(key)).toBe(false);
  });

  it('flushes everything when its notice subscription reconnects', async () => {
    const { coordinator, client } = await process();
    const key = randomUUID();
    await lead(coordinator, key, 'before');
    expect(coordinator.nearCacheSize).toBe(1);
    // Deleted without a notice: only the flush can make this process see it.
    await redis.del(flightKey(prefix, key));
    expect(await coordinator.acquire(key, 'o', 1000)).toEqual({
      kind: 'cached',
      payload: 'before',
    });
    const name = (await client.client('GETNAME')) as string;
    const subscriberId = ((await redis.client('LIST')) as string)
      .split('\n')
      .find((line) => line.includes(`name=${name}`) && / sub=[1-9]/.test(line))
      ?.match(/^id=(\d+)/)?.[1];
    expect(subscriberId).toBeDefined();

    await redis.client('KILL', 'ID', subscriberId!);

    await eventually(() => coordinator.nearCacheSize === 0, 'the flush');
    await eventually(
      async () => (await coordinator.acquire(key, `o-${randomUUID()}`, 1000)).kind !== 'cached',
      'the next call to go to Redis',
    );
  });

  it('holds at most maxEntries outcomes, least recently used out first', async () => {
    const { coordinator } = await process({ nearCache: { maxEntries: 3 } });
    const keys = Array.from({ length: 5 }, () => randomUUID());
    for (const key of keys) await lead(coordinator, key, key);
    expect(coordinator.nearCacheSize).toBe(3);

    for (const key of keys) await overwrite(key, 'changed');

    // The kept ones first: each answer from Redis is kept in turn, pushing another out.
    const answers: unknown[] = [];
    for (const key of [keys[2]!, keys[3]!, keys[4]!, keys[0]!, keys[1]!]) {
      answers.push(payloadOf(await coordinator.acquire(key, 'o', 1000)));
    }
    expect(answers).toEqual([keys[2], keys[3], keys[4], 'changed', 'changed']);
    expect(coordinator.nearCacheSize).toBe(3);
  });

  it('holds 1 MiB results up to maxBytes, least recently used out first, and none larger than it', async () => {
    const MiB = 1024 * 1024;
    const { coordinator } = await process({ nearCache: { maxBytes: 8 * MiB } });
    const keys = Array.from({ length: 5 }, () => randomUUID());
    for (const [index, key] of keys.entries())
      await lead(coordinator, key, String(index).repeat(MiB));
    // Each counts 256, two per character of its key and 2 MiB for its payload: three fit.
    expect(coordinator.nearCacheSize).toBe(3);
    expect(coordinator.nearCacheBytes).toBe(3 * (256 + 2 * keys[0]!.length + 2 * MiB));

    for (const key of keys) await overwrite(key, 'changed');
    const answers: unknown[] = [];
    for (const key of keys) answers.push(payloadOf(await coordinator.acquire(key, 'o', 1000)));
    expect(answers.map((answer) => String(answer).slice(0, 7))).toEqual([
      'changed',
      'changed',
      '2222222',
      '3333333',
      '4444444',
    ]);

    const { coordinator: small } = await process({ nearCache: { maxBytes: 4 * MiB } });
    await lead(small, randomUUID(), 'x'.repeat(2 * MiB));
    expect(small.nearCacheSize).toBe(0);
    expect(small.nearCacheBytes).toBe(0);
  });

  it('refuses bounds that are not positive integers', () => {
    for (const nearCache of [{ maxEntries: 0 }, { maxBytes: 1.5 }]) {
      expect(() => new RedisFlightCoordinator(redis, { keyPrefix: prefix, nearCache })).toThrow(
        InvalidRedisOptionError,
      );
    }
  });
});
