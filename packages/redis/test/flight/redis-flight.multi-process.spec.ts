import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RedisFlightCoordinator } from '@oncely/redis';
import { killAllWorkers, requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import type { FlightWorkerConfig } from './fixtures/flight.worker.js';
import { startFlightWorker } from './support/flight-workers.js';
import { deleteKeys, uniquePrefix } from '../support/redis-test-keys.js';

jest.setTimeout(120_000);

describe('SingleFlight across processes (Redis)', () => {
  const prefix = uniquePrefix('processes');
  let redis: Redis;

  function config(name: string, key: string, overrides: Partial<FlightWorkerConfig> = {}) {
    return {
      name,
      nodes: [services.redis],
      cluster: false,
      keyPrefix: prefix,
      key,
      counterKey: `${prefix}executions:${key}`,
      leaseTtl: 3_000,
      wait: 30_000,
      ...overrides,
    } satisfies FlightWorkerConfig;
  }

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
  });

  afterAll(async () => {
    await killAllWorkers();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('runs the work once across 3 processes and hands all of them the same result', async () => {
    const key = randomUUID();
    const workers = await Promise.all(
      ['a', 'b', 'c'].map((name) => startFlightWorker(config(name, key))),
    );

    workers.forEach((worker) => worker.run({ work: 'sleep', ms: 1_000 }));
    const outcomes = await Promise.all(workers.map((worker) => worker.outcome()));

    expect(await redis.get(`${prefix}executions:${key}`)).toBe('1');
    expect(outcomes.map((o) => o.type)).toEqual(['done', 'done', 'done']);
    const done = outcomes.filter((o) => o.type === 'done');
    expect(done.map((o) => o.source).sort()).toEqual(['executed', 'shared', 'shared']);
    done.forEach((o) => expect(o.value).toEqual(done[0]!.value));
  });

  it('lets exactly one follower take over after the leader is SIGKILLed mid-work', async () => {
    const key = randomUUID();
    const stored = flightKey(prefix, key);
    const [leader, ...followers] = await Promise.all(
      ['leader', 'follower-1', 'follower-2'].map((name) => startFlightWorker(config(name, key))),
    );
    const impatient = await startFlightWorker(config('impatient', key, { wait: 300 }));

    leader!.run({ work: 'hang' });
    const working = await leader!.report('working');
    followers.forEach((follower) => follower.run({ work: 'sleep', ms: 200 }));
    impatient.run({ work: 'sleep', ms: 200 });
    leader!.worker.kill('SIGKILL');
    await expect(leader!.worker.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });

    // The dead leader's lease stays until it expires: nobody else may delete or extend it.
    const outsider = new RedisFlightCoordinator(redis, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
    });
    expect(await outsider.release(key, `outsider-${randomUUID()}`)).toBe(false);
    expect(await outsider.renew(key, `outsider-${randomUUID()}`, 60_000)).toBe(false);
    expect((await redis.get(stored))?.slice(2)).toBe(working.owner);
    await outsider.close();

    const impatientOutcome = await impatient.outcome();
    expect(impatientOutcome).toMatchObject({ type: 'failed', error: 'FlightBusyError' });
    expect(impatientOutcome.type === 'failed' && impatientOutcome.leaseRemainingMs).toBeGreaterThan(
      0,
    );

    const outcomes = await Promise.all(followers.map((follower) => follower.outcome()));
    expect(await redis.get(`${prefix}executions:${key}`)).toBe('2');
    const done = outcomes.filter((o) => o.type === 'done');
    expect(done.map((o) => o.source).sort()).toEqual(['executed', 'shared']);
    const takeover = done.find((o) => o.source === 'executed')!;
    expect((takeover.value as { fence: number }).fence).toBeGreaterThan(working.fence);
    done.forEach((o) => expect(o.value).toEqual(takeover.value));
  });
});
