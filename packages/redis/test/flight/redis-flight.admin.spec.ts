import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RedisFlightCoordinator, type FlightInspection } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import { deleteKeys, uniquePrefix } from '../support/redis-test-keys.js';

jest.setTimeout(60_000);

/** Every entry of `listFlights`, by business key. */
export async function listAll(
  coordinator: RedisFlightCoordinator,
  operation: string,
  batchSize?: number,
): Promise<Map<string, FlightInspection>> {
  const found = new Map<string, FlightInspection>();
  for await (const { key, inspection } of coordinator.listFlights(operation, { batchSize })) {
    found.set(key, inspection);
  }
  return found;
}

describe('RedisFlightCoordinator operator methods', () => {
  const prefix = uniquePrefix('flight-admin');
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

  it('inspects a key: absent, leading (holder, service), cached (bytes), failed', async () => {
    const [leading, cached, failed] = [randomUUID(), randomUUID(), randomUUID()];
    await coordinator.acquire(leading, 'billing#a1', 10_000);
    await coordinator.acquire(cached, 'o', 10_000);
    await coordinator.complete(cached, 'o', { kind: 'result', payload: 'ünï', ttlMs: 60_000 });
    await coordinator.acquire(failed, 'o', 10_000);
    await coordinator.complete(failed, 'o', { kind: 'error', payload: '{}', ttlMs: 3_000 });

    expect(await coordinator.inspectFlight(randomUUID())).toEqual({ kind: 'absent' });
    expect(await coordinator.inspectFlight(leading)).toEqual({
      kind: 'leading',
      holder: 'billing#a1',
      service: 'billing',
      leaseRemainingMs: expect.any(Number),
    });
    const lease = (await coordinator.inspectFlight(leading)) as { leaseRemainingMs: number };
    expect(lease.leaseRemainingMs).toBeGreaterThan(0);
    expect(lease.leaseRemainingMs).toBeLessThanOrEqual(10_000);
    expect(await coordinator.inspectFlight(cached)).toEqual({
      kind: 'cached',
      remainingMs: expect.any(Number),
      bytes: Buffer.byteLength('ünï'),
    });
    const failure = (await coordinator.inspectFlight(failed)) as { remainingMs: number };
    expect(failure).toEqual({ kind: 'failed', remainingMs: expect.any(Number) });
    expect(failure.remainingMs).toBeGreaterThan(0);
    expect(failure.remainingMs).toBeLessThanOrEqual(3_000);
  });

  it('lists the flights of an operation (all versions, or one), never another operation', async () => {
    const keys = {
      v1: Array.from({ length: 25 }, (_, i) => `shop:quote:v1:t:${i}`),
      v2: ['shop:quote:v2:t:x', 'shop:quote:v2:{brace}%'],
      other: ['shop:quotes:v1:t:y', 'shop:quote', 'shop:other:v1:t:z'],
    };
    for (const key of [...keys.v1, ...keys.v2, ...keys.other]) {
      await coordinator.acquire(key, 'o', 10_000);
    }
    await coordinator.complete(keys.v2[0]!, 'o', { kind: 'result', payload: 'r', ttlMs: 60_000 });

    const all = await listAll(coordinator, 'shop:quote', 7);
    expect([...all.keys()].sort()).toEqual([...keys.v1, ...keys.v2].sort());
    expect(all.get(keys.v2[0]!)).toEqual(expect.objectContaining({ kind: 'cached', bytes: 1 }));
    expect(all.get(keys.v2[1]!)).toEqual(expect.objectContaining({ kind: 'leading', holder: 'o' }));
    expect([...(await listAll(coordinator, 'shop:quote:v2')).keys()].sort()).toEqual(
      [...keys.v2].sort(),
    );
    expect((await listAll(coordinator, 'shop:*')).size).toBe(0);
  });

  it('evicts a cached result or error, never a lease', async () => {
    const [result, error, lease] = [randomUUID(), randomUUID(), randomUUID()];
    for (const key of [result, error, lease]) await coordinator.acquire(key, 'o', 10_000);
    await coordinator.complete(result, 'o', { kind: 'result', payload: 'r', ttlMs: 60_000 });
    await coordinator.complete(error, 'o', { kind: 'error', payload: 'e', ttlMs: 60_000 });

    expect(await coordinator.evictResult(result)).toBe(true);
    expect(await coordinator.evictResult(error)).toBe(true);
    expect(await coordinator.evictResult(lease)).toBe(false);
    expect(await coordinator.evictResult(randomUUID())).toBe(false);

    expect(await redis.exists(flightKey(prefix, result), flightKey(prefix, error))).toBe(0);
    expect((await coordinator.acquire(result, 'next', 10_000)).kind).toBe('leader');
    expect(await coordinator.inspectFlight(lease)).toEqual(
      expect.objectContaining({ kind: 'leading', holder: 'o' }),
    );
  });

  it('force-releases a lease whoever holds it; the next leader gets a higher fence', async () => {
    const key = randomUUID();
    const first = await coordinator.acquire(key, 'stuck', 60_000);

    expect(await coordinator.forceReleaseLease(key)).toBe(true);
    expect(await coordinator.forceReleaseLease(key)).toBe(false);
    expect(
      await coordinator.complete(key, 'stuck', { kind: 'result', payload: 'x', ttlMs: 1000 }),
    ).toBe(false);

    const second = await coordinator.acquire(key, 'next', 60_000);
    expect(first.kind).toBe('leader');
    expect(second.kind).toBe('leader');
    if (first.kind !== 'leader' || second.kind !== 'leader') return;
    expect(second.fence).toBeGreaterThan(first.fence);
    await coordinator.complete(key, 'next', { kind: 'result', payload: 'r', ttlMs: 60_000 });
    // A cached outcome is left alone.
    expect(await coordinator.forceReleaseLease(key)).toBe(false);
    expect(await coordinator.inspectFlight(key)).toEqual(
      expect.objectContaining({ kind: 'cached' }),
    );
  });
});
