import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { SingleFlight } from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
} from '@oncely/core/adapter';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import {
  requireService,
  startRedisServer,
  stopAllRedisServers,
  type RedisServer,
} from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { gate, observed } from './support/observed-coordinator.js';

jest.setTimeout(60_000);

type Calls = Record<string, number>;

/**
 * What each script path runs inside Redis. commandstats counts these inner calls too, so the
 * expected deltas below are the client's round trips (EVALSHA) plus exactly these: a stray
 * client command of any kind would show up as a difference.
 */
const inside = {
  // SET NX GET finds the outcome; PTTL tells the near cache how long it may keep it.
  acquireCached: { set: 1, pttl: 1 },
  // SET NX GET takes the lease; TIME is the fence.
  acquireLeader: { set: 1, time: 1 },
  // The first follower marks the lease as waited for (SET KEEPTTL), so completion publishes.
  acquireBusy: { set: 2, pttl: 1 },
  // GET checks the owner, SET overwrites the lease with the result.
  completeResult: { get: 1, set: 1 },
  completeResultToWaiters: { get: 1, set: 1, publish: 1 },
} satisfies Record<string, Calls>;

function sum(...parts: Calls[]): Calls {
  const total: Calls = {};
  for (const part of parts) {
    for (const [name, calls] of Object.entries(part)) total[name] = (total[name] ?? 0) + calls;
  }
  return total;
}

/** Hot-path budget, counted by a redis-server nobody else uses (INFO commandstats deltas). */
describe('Redis commands per flight', () => {
  let server: RedisServer;
  let admin: Redis;
  /** Every acquire goes to Redis: the counts of the Redis paths. */
  let coordinator: RedisFlightCoordinator;
  /** With its near cache, as by default. */
  let nearCached: RedisFlightCoordinator;

  async function commandstats(): Promise<Calls> {
    const info = await admin.info('commandstats');
    const calls: Calls = {};
    for (const [, name, count] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      calls[name!] = Number(count);
    }
    return calls;
  }

  /**
   * Commands `action` caused: the commandstats delta minus the one INFO of the first snapshot
   * (a snapshot is counted in the next one, not in its own).
   */
  async function commandsOf<T>(action: () => Promise<T>) {
    const before = await commandstats();
    const value = await action();
    const after = await commandstats();
    const delta: Calls = {};
    for (const [name, calls] of Object.entries(after)) {
      const caused = calls - (before[name] ?? 0) - (name === 'info' ? 1 : 0);
      if (caused !== 0) delta[name] = caused;
    }
    return { value, delta, roundTrips: (delta.evalsha ?? 0) + (delta.eval ?? 0) };
  }

  /** Backoff and lease far beyond the test: only the notice can wake a follower. */
  const noPolling = { leaseTtl: 60_000, backoff: { initial: 60_000, max: 60_000 } } as const;

  beforeAll(async () => {
    await requireService('redis');
    server = await startRedisServer();
    admin = new Redis({ host: server.host, port: server.port });
    coordinator = new RedisFlightCoordinator(
      { host: server.host, port: server.port },
      { commandTimeout: 10_000, nearCache: false },
    );
    nearCached = new RedisFlightCoordinator(
      { host: server.host, port: server.port },
      { commandTimeout: 10_000 },
    );
    await coordinator.connect();
    await nearCached.connect();
    // The first use of each script on a connection is an EVAL carrying its source (still one
    // round trip); afterwards it is EVALSHA. Warm both scripts of the leader path up.
    await new SingleFlight(coordinator).run(randomUUID(), async () => 'warm-up');
    await new SingleFlight(nearCached).run(randomUUID(), async () => 'warm-up');
  });

  afterAll(async () => {
    await coordinator.close();
    await nearCached.close();
    await admin.quit();
    await stopAllRedisServers();
  });

  it('measures nothing when nothing happens', async () => {
    expect(await commandsOf(async () => 'idle')).toEqual({
      value: 'idle',
      delta: {},
      roundTrips: 0,
    });
  });

  it('costs a leader 2 round trips (acquire, complete) and a cache hit 1', async () => {
    const flight = new SingleFlight(coordinator, noPolling);
    const key = randomUUID();

    const leader = await commandsOf(() => flight.run(key, async () => ({ total: 42 })));
    const hit = await commandsOf(() => flight.run(key, async () => ({ total: 0 })));

    expect(leader.value).toEqual({ value: { total: 42 }, source: 'executed' });
    expect(leader.roundTrips).toBe(2);
    expect(leader.delta).toEqual(sum({ evalsha: 2 }, inside.acquireLeader, inside.completeResult));
    expect(hit.value).toEqual({ value: { total: 42 }, source: 'cached' });
    expect(hit.roundTrips).toBe(1);
    expect(hit.delta).toEqual(sum({ evalsha: 1 }, inside.acquireCached));
  });

  it('costs a follower woken by the notice one round trip more than a hit', async () => {
    const key = randomUUID();
    const release = gate();
    const leader = new SingleFlight(coordinator, noPolling);
    const follower = new SingleFlight(
      observed(coordinator, (outcome) => {
        // The leader finishes only once the follower is waiting (after its busy acquire).
        if (outcome.kind === 'busy') setImmediate(() => release.open());
      }),
      noPolling,
    );

    const both = await commandsOf(async () => {
      const leading = leader.run(key, async () => {
        await release.opened;
        return 'once';
      });
      await new Promise((resolve) => setImmediate(resolve));
      return Promise.all([leading, follower.run(key, async () => 'twice')]);
    });

    expect(both.value).toEqual([
      { value: 'once', source: 'executed' },
      { value: 'once', source: 'shared' },
    ]);
    // Leader: acquire + complete. Follower: its busy acquire, then one acquire after the notice.
    expect(both.roundTrips).toBe(4);
    expect(both.delta).toEqual(
      sum(
        { evalsha: 4 },
        inside.acquireLeader,
        inside.completeResultToWaiters,
        inside.acquireBusy,
        inside.acquireCached,
      ),
    );
  });
});

describe('Redis round trips per idempotent call on the Redis record store', () => {
  let server: RedisServer;
  let admin: Redis;
  let coordinator: RedisFlightCoordinator;
  let store: RedisIdempotencyRecordStore;

  async function roundTripsOf(action: () => Promise<unknown>): Promise<number> {
    const scripts = async () => {
      const info = await admin.info('commandstats');
      let calls = 0;
      for (const [, count] of info.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)) {
        calls += Number(count);
      }
      return calls;
    };
    const before = await scripts();
    await action();
    return (await scripts()) - before;
  }

  beforeAll(async () => {
    await requireService('redis');
    server = await startRedisServer();
    admin = new Redis({ host: server.host, port: server.port });
    coordinator = new RedisFlightCoordinator({ host: server.host, port: server.port });
    // Replays served by Redis are what is counted here; the near cache's are in its own spec.
    store = new RedisIdempotencyRecordStore(
      { host: server.host, port: server.port },
      { nearCache: false },
    );
    await coordinator.connect();
  });

  afterAll(async () => {
    await coordinator.close();
    await store.close();
    await admin.quit();
    await stopAllRedisServers();
  });

  // Under 'wait' a replay this process has seen costs no round trip: the guard flight's near
  // cache serves it. Under 'reject' no guard runs, and the store (its near cache off here) reads
  // the record in one.
  it.each([
    ['reject', 2, 1],
    ['wait', 4, 0],
  ] as const)(
    "onBusy '%s': a first call costs %i round trips (the guard flight only where it pays), a replay %i",
    async (onBusy, first, replay) => {
      const executor = new ProtectedCallExecutor(createProtectionEngines({ coordinator, store }));
      const route = defineProtectedRoute(
        'Orders.create',
        { idempotent: { operation: 'order', scope: 'user.tenant', onBusy } },
        { ...DEFAULT_PROTECTION, namespace: 'count' },
      );
      const call = (key: string) =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, {
            body: { sku: 'a' },
            headers: { 'idempotency-key': key },
            user: { tenant: 't' },
          }),
          handler: async () => ({ status: 201, headers: {}, body: { kind: 'json', value: 1 } }),
        });
      // The first use of each script on a connection may load it: warm them all up.
      await call(`warm-${onBusy}`);
      await call(`warm-${onBusy}`);
      expect(await roundTripsOf(() => call(`k-${onBusy}`))).toBe(first);
      expect(await roundTripsOf(() => call(`k-${onBusy}`))).toBe(replay);
    },
  );
});

/** The near cache: hits of outcomes this process has seen cost no command at all. */
describe('Redis commands per near-cached hit', () => {
  let server: RedisServer;
  let admin: Redis;
  let leaderSide: RedisFlightCoordinator;
  let reader: RedisFlightCoordinator;
  let readerClient: Redis;

  async function commandsOf(action: () => Promise<unknown>): Promise<number> {
    const total = async () => {
      const info = await admin.info('commandstats');
      let calls = 0;
      for (const [, name, count] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        if (name !== 'info') calls += Number(count);
      }
      return calls;
    };
    const before = await total();
    await action();
    return (await total()) - before;
  }

  beforeAll(async () => {
    await requireService('redis');
    server = await startRedisServer();
    admin = new Redis({ host: server.host, port: server.port });
    // Two clients: two "processes" with a near cache each.
    leaderSide = new RedisFlightCoordinator({ host: server.host, port: server.port });
    readerClient = new Redis({ host: server.host, port: server.port });
    reader = new RedisFlightCoordinator(readerClient);
    await leaderSide.connect();
    await reader.connect();
    await new SingleFlight(leaderSide).run(randomUUID(), async () => 'warm-up');
    await new SingleFlight(reader).run(randomUUID(), async () => 'warm-up');
  });

  afterAll(async () => {
    await leaderSide.close();
    await reader.close();
    await readerClient.quit();
    await admin.quit();
    await stopAllRedisServers();
  });

  it('serves the leader its own result, and another process the result it read once, from memory', async () => {
    const key = randomUUID();
    const work = async () => ({ total: 42 });
    await new SingleFlight(leaderSide).run(key, work);

    const ownHit = await commandsOf(() => new SingleFlight(leaderSide).run(key, work));
    const firstRead = await commandsOf(() => new SingleFlight(reader).run(key, work));
    const secondRead = await commandsOf(() => new SingleFlight(reader).run(key, work));

    expect(ownHit).toBe(0);
    // EVALSHA, SET NX GET, PTTL.
    expect(firstRead).toBe(3);
    expect(secondRead).toBe(0);
    await expect(new SingleFlight(reader).run(key, work)).resolves.toEqual({
      value: { total: 42 },
      source: 'cached',
    });
  });
});
