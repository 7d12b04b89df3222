import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { RedisFlightCoordinator } from '@oncely/redis';
import { killAllWorkers, requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import type { FlightWorkerConfig, RunMessage } from './fixtures/flight.worker.js';
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

  describe('a leader failing while 4 processes wait', () => {
    async function leaderFailingWith(followerWork: RunMessage) {
      const key = randomUUID();
      const [leader, ...followers] = await Promise.all(
        ['leader', 'w-1', 'w-2', 'w-3', 'w-4'].map((name) => startFlightWorker(config(name, key))),
      );
      leader!.run({ work: 'fail', ms: 1_500 });
      await leader!.report('working');
      followers.forEach((follower) => follower.run(followerWork));
      const leaderOutcome = await leader!.outcome();
      const outcomes = await Promise.all(followers.map((follower) => follower.outcome()));
      const executions = Number(await redis.get(`${prefix}executions:${key}`));
      return { leaderOutcome, outcomes, executions };
    }

    it("runs the work exactly twice and hands every waiter the second run's result", async () => {
      const { leaderOutcome, outcomes, executions } = await leaderFailingWith({
        work: 'sleep',
        ms: 200,
      });
      expect(leaderOutcome).toMatchObject({
        type: 'failed',
        message: 'upstream unavailable at leader',
      });
      expect(executions).toBe(2);
      const done = outcomes.filter((o) => o.type === 'done');
      expect(done.map((o) => o.source).sort()).toEqual(['executed', 'shared', 'shared', 'shared']);
      done.forEach((o) => expect(o.value).toEqual(done[0]!.value));
    });

    it('runs the work exactly twice when the second run fails too, and hands every waiter that failure', async () => {
      const { leaderOutcome, outcomes, executions } = await leaderFailingWith({
        work: 'fail',
        ms: 200,
      });
      expect(leaderOutcome).toMatchObject({
        type: 'failed',
        message: 'upstream unavailable at leader',
      });
      expect(executions).toBe(2);
      const failed = outcomes.filter((o) => o.type === 'failed');
      expect(failed).toHaveLength(4);
      const own = failed.filter((o) => o.error === 'Error');
      expect(own).toHaveLength(1);
      const retriedBy = own[0]!.name;
      expect(own[0]!.message).toBe(`upstream unavailable at ${retriedBy}`);
      const shared = failed.filter((o) => o.name !== retriedBy);
      expect(shared.map((o) => [o.error, o.message])).toEqual(
        Array(3).fill(['SharedFlightError', `upstream unavailable at ${retriedBy}`]),
      );
    });
  });
});
