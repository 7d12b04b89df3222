import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import {
  FlightBusyError,
  LeaseLostError,
  SharedFlightError,
  SingleFlight,
  type FlightResult,
  type SingleFlightOptions,
} from '@oncely/core';
import { HttpStatusFailurePolicy } from '@oncely/core/adapter';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { flightKey } from '../../src/flight/flight-keys.js';
import { gate, observed } from './support/observed-coordinator.js';
import { deleteKeys, eventually, sleep, uniquePrefix } from '../support/redis-test-keys.js';

// The redis project's testTimeout in jest.config.ts is not applied (Jest reads it globally).
jest.setTimeout(60_000);

class ValidationFailed extends Error {
  readonly status = 422;
}

describe('SingleFlight on RedisFlightCoordinator', () => {
  const prefix = uniquePrefix('engine');
  const coordinators: RedisFlightCoordinator[] = [];
  let redis: Redis;

  /**
   * A "node": its own engine and its own coordinator connection, as another server would have.
   * Its generous commandTimeout keeps a slow reply on a loaded machine from counting as an
   * outage (which would run the work uncoordinated).
   */
  function node(options: SingleFlightOptions = {}, onBusy?: () => void) {
    const coordinator = new RedisFlightCoordinator(services.redis, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
    });
    coordinators.push(coordinator);
    const seen = observed(coordinator, (outcome) => {
      if (outcome.kind === 'busy') onBusy?.();
    });
    return new SingleFlight(seen, { leaseTtl: 5_000, wait: 20_000, ...options });
  }

  /** Counts executions in Redis, as work on several nodes would. */
  function counter() {
    const key = `${prefix}executions:${randomUUID()}`;
    return {
      hit: () => redis.incr(key),
      count: async () => Number((await redis.get(key)) ?? 0),
    };
  }

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
  });

  afterAll(async () => {
    await Promise.all(coordinators.map((c) => c.close()));
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('runs 100 concurrent calls in one process once, giving all 100 the same result', async () => {
    const flight = node();
    const executions = counter();
    const key = randomUUID();

    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        flight.run(key, async ({ fence }) => {
          await executions.hit();
          await sleep(200);
          return { fence, at: new Date('2024-01-02T03:04:05.678Z'), bytes: Buffer.from('ok') };
        }),
      ),
    );

    expect(await executions.count()).toBe(1);
    const first = results[0]!.value;
    results.forEach((result) => expect(result.value).toEqual(first));
    expect(results.filter((r) => r.source === 'executed')).toHaveLength(1);
    expect(results.filter((r) => r.source === 'joined')).toHaveLength(99);
  });

  it('runs 100 concurrent calls spread over 5 nodes once: one leader, 4 remote followers', async () => {
    const nodes = Array.from({ length: 5 }, () => node());
    const executions = counter();
    const key = randomUUID();

    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        nodes[i % 5]!.run(key, async () => {
          await executions.hit();
          await sleep(500);
          return { answer: 42, at: new Date(0) };
        }),
      ),
    );

    expect(await executions.count()).toBe(1);
    results.forEach((result) => expect(result.value).toEqual({ answer: 42, at: new Date(0) }));
    const count = (source: FlightResult<unknown>['source']) =>
      results.filter((r) => r.source === source).length;
    expect([count('executed'), count('shared'), count('joined')]).toEqual([1, 4, 95]);
  });

  it('keeps a job running 3x its lease TTL exclusive by renewing the lease', async () => {
    const leaseTtl = 600;
    const leader = node({ leaseTtl });
    const follower = node({ leaseTtl });
    const probe = new RedisFlightCoordinator(services.redis, {
      keyPrefix: prefix,
      commandTimeout: 10_000,
    });
    coordinators.push(probe);
    const executions = counter();
    const key = randomUUID();
    const started = gate();
    let running = true;

    const leading = leader.run(key, async () => {
      await executions.hit();
      started.open();
      await sleep(3 * leaseTtl);
      running = false;
      return 'long job';
    });
    await started.opened;
    const following = follower.run(key, async () => {
      await executions.hit();
      return 'second execution';
    });
    const probes: string[] = [];
    while (running) {
      probes.push((await probe.acquire(key, `probe-${randomUUID()}`, leaseTtl)).kind);
      await sleep(50);
    }

    await expect(leading).resolves.toEqual({ value: 'long job', source: 'executed' });
    await expect(following).resolves.toEqual({ value: 'long job', source: 'shared' });
    expect(await executions.count()).toBe(1);
    expect(probes.length).toBeGreaterThan(0);
    expect(new Set(probes)).toEqual(new Set(['busy']));
  });

  it('aborts the leader when its lease is deleted from outside, and stores nothing', async () => {
    const flight = node({ leaseTtl: 600 });
    const key = randomUUID();
    const stored = flightKey(prefix, key);
    const started = gate();
    let abortReason: unknown;

    const running = flight.run(key, async ({ signal }) => {
      started.open();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      abortReason = signal.reason;
      return 'finished after losing the lease';
    });
    await started.opened;
    await redis.del(stored);

    await expect(running).rejects.toBeInstanceOf(LeaseLostError);
    expect(abortReason).toBeInstanceOf(LeaseLostError);
    expect(await redis.exists(stored)).toBe(0);
  });

  it('shares a deterministic error with the waiters and caches it for errorTtl', async () => {
    // Shares what the same request would fail with again: a 4xx.
    const sharing = { errorTtl: 1_500, failurePolicy: new HttpStatusFailurePolicy() };
    let busy = 0;
    const nodes = Array.from({ length: 3 }, () => node(sharing, () => (busy += 1)));
    const executions = counter();
    const key = randomUUID();
    const stored = flightKey(prefix, key);
    const release = gate();
    const work = async () => {
      await executions.hit();
      await release.opened;
      throw new ValidationFailed('amount must be positive');
    };

    const calls = nodes.map((flight) => flight.run(key, work));
    await eventually(() => busy >= 2, 'both followers to wait');
    release.open();
    const settled = await Promise.allSettled(calls);

    expect(await executions.count()).toBe(1);
    const reasons = settled.map((s) => (s.status === 'rejected' ? (s.reason as Error) : s));
    expect(reasons.filter((r) => r instanceof ValidationFailed)).toHaveLength(1);
    const shared = reasons.filter((r): r is SharedFlightError => r instanceof SharedFlightError);
    expect(shared).toHaveLength(2);
    shared.forEach((error) => {
      expect(error.status).toBe(422);
      expect(error.message).toBe('amount must be positive');
    });

    expect((await redis.get(stored))?.[0]).toBe('E');
    const ttl = await redis.pttl(stored);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(sharing.errorTtl);
    await expect(node(sharing).run(key, work)).rejects.toBeInstanceOf(SharedFlightError);
    expect(await executions.count()).toBe(1);

    await eventually(async () => (await redis.exists(stored)) === 0, 'the error to expire');
    const again = node(sharing).run(key, async () => {
      await executions.hit();
      return 'fixed';
    });
    await expect(again).resolves.toEqual({ value: 'fixed', source: 'executed' });
    expect(await executions.count()).toBe(2);
  });

  it('lets exactly one waiter run again after a transient failure', async () => {
    let busy = 0;
    const leader = node();
    const followers = Array.from({ length: 4 }, () => node({}, () => (busy += 1)));
    const executions = counter();
    const key = randomUUID();
    const release = gate();

    const leading = leader.run(key, async () => {
      await executions.hit();
      await release.opened;
      throw new Error('upstream timed out');
    });
    await eventually(
      async () => (await redis.getrange(flightKey(prefix, key), 0, 0)) === 'L',
      'lease',
    );
    const following = followers.map((flight) =>
      flight.run(key, async () => {
        await executions.hit();
        await sleep(100);
        return 'second try worked';
      }),
    );
    await eventually(() => busy >= 4, 'all followers to wait');
    release.open();

    await expect(leading).rejects.toThrow('upstream timed out');
    const results = await Promise.all(following);
    expect(await executions.count()).toBe(2);
    results.forEach((result) => expect(result.value).toBe('second try worked'));
    expect(results.filter((r) => r.source === 'executed')).toHaveLength(1);
    expect(results.filter((r) => r.source === 'shared')).toHaveLength(3);
  });

  it('runs the work exactly twice when the run after a transient failure fails too, and hands its failure to every other waiter', async () => {
    let busy = 0;
    const leader = node();
    const followers = Array.from({ length: 4 }, () => node({}, () => (busy += 1)));
    // Two callers in one process: the second joins the first there.
    const local = node({}, () => (busy += 1));
    const executions = counter();
    const key = randomUUID();
    const release = gate();

    const leading = leader.run(key, async () => {
      await executions.hit();
      await release.opened;
      throw new Error('upstream timed out (1)');
    });
    await eventually(
      async () => (await redis.getrange(flightKey(prefix, key), 0, 0)) === 'L',
      'lease',
    );
    const work = async () => {
      const attempt = await executions.hit();
      await sleep(100);
      throw new Error(`upstream timed out (${attempt})`);
    };
    const following = Promise.allSettled(
      [...followers, local, local].map((flight) => flight.run(key, work)),
    );
    await eventually(() => busy >= 5, 'all followers to wait');
    release.open();

    await expect(leading).rejects.toThrow('upstream timed out (1)');
    const errors = (await following).map((s) =>
      s.status === 'rejected' ? (s.reason as Error) : s,
    );
    expect(await executions.count()).toBe(2);
    expect(errors.map((error) => (error as Error).message)).toEqual(
      Array(6).fill('upstream timed out (2)'),
    );
    // The retry's own error, for its caller and its joiners in the same process; a copy elsewhere.
    const own = new Set(errors.filter((error) => !(error instanceof SharedFlightError)));
    expect(own.size).toBe(1);
  });

  it("raises FlightBusyError with the lease's remaining time on onBusy: 'reject'", async () => {
    const leaseTtl = 10_000;
    const key = randomUUID();
    const release = gate();
    const leading = node({ leaseTtl }).run(key, async () => {
      await release.opened;
      return 'done';
    });
    await eventually(
      async () => (await redis.getrange(flightKey(prefix, key), 0, 0)) === 'L',
      'lease',
    );

    const rejected = node({ onBusy: 'reject' }).run(key, async () => 'never');

    const error = await rejected.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlightBusyError);
    const { leaseRemainingMs } = error as FlightBusyError;
    expect(leaseRemainingMs).toBeGreaterThan(0);
    expect(leaseRemainingMs).toBeLessThanOrEqual(leaseTtl);
    release.open();
    await leading;
  });

  it('raises FlightBusyError when the wait runs out before the leader completes', async () => {
    const leaseTtl = 10_000;
    const key = randomUUID();
    const release = gate();
    let executed = false;
    const leading = node({ leaseTtl }).run(key, async () => {
      await release.opened;
      return 'done';
    });
    await eventually(
      async () => (await redis.getrange(flightKey(prefix, key), 0, 0)) === 'L',
      'lease',
    );

    const error = await node({ wait: 200 })
      .run(key, async () => {
        executed = true;
        return 'never';
      })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(FlightBusyError);
    expect((error as FlightBusyError).leaseRemainingMs).toBeGreaterThan(0);
    expect((error as FlightBusyError).leaseRemainingMs).toBeLessThanOrEqual(leaseTtl);
    expect(executed).toBe(false);
    release.open();
    await expect(leading).resolves.toEqual({ value: 'done', source: 'executed' });
  });
});
