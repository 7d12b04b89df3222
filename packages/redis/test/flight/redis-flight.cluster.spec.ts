import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { flightCoordinatorContract, registerContractCases } from '@oncely/core/testing';
import { SingleFlight } from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import {
  killAllWorkers,
  requireService,
  startRedisCluster,
  stopAllRedisServers,
  type RedisCluster,
} from '@oncely/testing-kit';
import { Cluster } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import { startFlightWorker } from './support/flight-workers.js';
import { sleep, uniquePrefix } from '../support/redis-test-keys.js';

jest.setTimeout(120_000);

describe('RedisFlightCoordinator on a 3-master Redis Cluster', () => {
  const prefix = uniquePrefix('cluster');
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    await requireService('redis');
    cluster = await startRedisCluster(3);
    client = new Cluster([...cluster.nodes]);
  });

  afterAll(async () => {
    await killAllWorkers();
    await client?.quit();
    await stopAllRedisServers();
  });

  it('keeps every key of a flight in one slot, braces in the business key included', async () => {
    const businessKey = `order}{${randomUUID()}`;
    // One key per business key, whose hash tag is the whole (escaped) business key.
    const slot = await client.cluster('KEYSLOT', flightKey(prefix, businessKey));
    expect(slot).toBe(await client.cluster('KEYSLOT', flightKey('elsewhere:', businessKey)));

    const coordinator = new RedisFlightCoordinator(client, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
    });
    const flight = new SingleFlight(coordinator);
    await expect(flight.run(businessKey, async () => 'stored')).resolves.toEqual({
      value: 'stored',
      source: 'executed',
    });
    await expect(flight.run(businessKey, async () => 'again')).resolves.toEqual({
      value: 'stored',
      source: 'cached',
    });
    await coordinator.close();
  });

  it('spreads the flights of different business keys over the masters', async () => {
    const slots = await Promise.all(
      Array.from({ length: 30 }, () => client.cluster('KEYSLOT', flightKey(prefix, randomUUID()))),
    );
    const masters = new Set(slots.map((slot) => Math.floor(slot / (16_384 / 3))));
    expect(masters.size).toBe(3);
  });

  it('runs the work once across 3 processes', async () => {
    const key = `report:${randomUUID()}`;
    const counterKey = `${prefix}executions:${key}`;
    const workers = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        startFlightWorker({
          name,
          nodes: [...cluster.nodes],
          cluster: true,
          keyPrefix: prefix,
          key,
          counterKey,
          leaseTtl: 3_000,
          wait: 30_000,
        }),
      ),
    );

    workers.forEach((worker) => worker.run({ work: 'sleep', ms: 1_000 }));
    const outcomes = await Promise.all(workers.map((worker) => worker.outcome()));

    expect(await client.get(counterKey)).toBe('1');
    const done = outcomes.filter((o) => o.type === 'done');
    expect(done.map((o) => o.source).sort()).toEqual(['executed', 'shared', 'shared']);
    done.forEach((o) => expect(o.value).toEqual(done[0]!.value));
  });

  it('lists the flights of an operation on every master, inspects and evicts them', async () => {
    const coordinator = new RedisFlightCoordinator(client, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
    });
    const operation = `listed:${randomUUID().slice(0, 8)}`;
    const keys = Array.from({ length: 30 }, (_, i) => `${operation}:v1:t:${i}`);
    for (const key of keys) {
      await coordinator.acquire(key, 'o', 60_000);
      await coordinator.complete(key, 'o', { kind: 'result', payload: 'r', ttlMs: 60_000 });
    }
    const slots = await Promise.all(
      keys.map((key) => client.cluster('KEYSLOT', flightKey(prefix, key))),
    );
    expect(new Set(slots.map((slot) => Math.floor(slot / (16_384 / 3)))).size).toBe(3);

    const listed = new Map<string, unknown>();
    for await (const { key, inspection } of coordinator.listFlights(operation, { batchSize: 5 })) {
      listed.set(key, inspection);
    }

    expect([...listed.keys()].sort()).toEqual([...keys].sort());
    listed.forEach((inspection) =>
      expect(inspection).toEqual(expect.objectContaining({ kind: 'cached', bytes: 1 })),
    );
    // No near cache on a Cluster client: every hit asks Redis.
    expect(await coordinator.acquire(keys[1]!, 'o', 1000)).toEqual({
      kind: 'cached',
      payload: 'r',
    });
    expect(coordinator.nearCacheSize).toBe(0);
    expect(await coordinator.evictResult(keys[0]!)).toBe(true);
    expect(await coordinator.inspectFlight(keys[0]!)).toEqual({ kind: 'absent' });
    await coordinator.close();
  });

  describe('contract', () => {
    registerContractCases(
      flightCoordinatorContract(() => {
        const coordinator = new RedisFlightCoordinator(client, {
          keyPrefix: prefix,
          commandTimeout: 10_000,
        });
        return { coordinator, advance: sleep, cleanup: () => coordinator.close() };
      }),
      it,
    );
  });
});
