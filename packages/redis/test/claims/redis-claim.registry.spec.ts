import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { createOncelyEngine, ForeignClaimError, type OncelyEngine } from '@oncely/core';
import { claimRegistryContract, registerContractCases } from '@oncely/core/testing';
import {
  RedisClaimRegistry,
  RedisFlightCoordinator,
  RedisIdempotencyRecordStore,
} from '@oncely/redis';
import {
  requireService,
  services,
  startRedisCluster,
  stopAllRedisServers,
  type RedisCluster,
} from '@oncely/testing-kit';
import { connect, deleteKeys, scanKeys, sleep, uniquePrefix } from '../support/redis-test-keys.js';

describe('RedisClaimRegistry meets the ClaimRegistry contract', () => {
  const runPrefix = uniquePrefix('claims');
  let redis: Redis;
  let other: Redis;
  let harnesses = 0;

  beforeAll(async () => {
    await requireService('redis');
    redis = connect();
    other = connect();
  });

  afterAll(async () => {
    await deleteKeys(redis, runPrefix);
    await Promise.all([redis.quit(), other.quit()]);
  });

  registerContractCases(
    claimRegistryContract(
      () => {
        const keyPrefix = `${runPrefix}${++harnesses}:`;
        return {
          registry: new RedisClaimRegistry(redis, { keyPrefix }),
          // Another connection, as another service's process has.
          peer: new RedisClaimRegistry(other, { keyPrefix }),
          advance: sleep,
          cleanup: () => deleteKeys(redis, keyPrefix),
        };
      },
      { ttlMs: 300, concurrency: 12 },
    ),
    it,
  );

  it('keeps both keys of an operation exactly as long as its longest-lived entry, and no longer once all withdrew', async () => {
    const keyPrefix = `${runPrefix}ttl:`;
    const registry = new RedisClaimRegistry(redis, { keyPrefix });
    const engine = createOncelyEngine({ namespace: 'ttl', service: 'ttl-api' });
    engine.defineRoute('Ttl.pay', { idempotent: { operation: 'pay', scope: 'user.id' } });
    const claims = engine.claims();
    await registry.announce({ instance: 'a', claims, ttlMs: 5_000 });
    await registry.announce({ instance: 'b', claims, ttlMs: 60_000 });
    const keys = await scanKeys(redis, `${keyPrefix}*`);
    expect(keys.sort()).toEqual([
      `${keyPrefix}claims:{idempotency%7Cttl%3Apay%3Av1}:entries`,
      `${keyPrefix}claims:{idempotency%7Cttl%3Apay%3Av1}:expiry`,
    ]);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
    const entries = await registry.entries(claims[0]!);
    expect(entries.map(({ instance }) => instance).sort()).toEqual(['a', 'b']);
    await registry.withdraw('a', claims);
    await registry.withdraw('b', claims);
    expect(await scanKeys(redis, `${keyPrefix}*`)).toEqual([]);
    await engine.close();
  });
});

/** Claims go where the records go: the store's Redis for idempotency, the coordinator's for SingleFlight. */
describe('engines on Redis register their claims with the store and the coordinator', () => {
  const runPrefix = uniquePrefix('claims-engine');
  const created: OncelyEngine[] = [];
  let redis: Redis;

  beforeAll(async () => {
    await requireService('redis');
    redis = connect();
  });

  afterEach(async () => {
    await Promise.all(created.splice(0).map((engine) => engine.close()));
  });

  afterAll(async () => {
    await deleteKeys(redis, runPrefix);
    await redis.quit();
  });

  function engine(service: string, storePrefix: string, flightPrefix: string): OncelyEngine {
    const url = `redis://${services.redis.host}:${services.redis.port}`;
    const built = createOncelyEngine({
      namespace: 'claims',
      service,
      coordinator: new RedisFlightCoordinator(url, { keyPrefix: flightPrefix }),
      store: new RedisIdempotencyRecordStore(url, { keyPrefix: storePrefix }),
    });
    created.push(built);
    built.defineRoute(`${service}.pay`, {
      idempotent: { operation: 'pay', scope: 'user.id' },
      singleFlight: { operation: 'pay', scope: 'user.id' },
    });
    return built;
  }

  it('fails the second service on the same Redis, and keeps nothing of it after', async () => {
    const prefix = `${runPrefix}same:`;
    await engine('orders-api', prefix, prefix).registerClaims();
    const error = await engine('billing-api', prefix, prefix)
      .registerClaims()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForeignClaimError);
    // Both mechanisms of the route conflict.
    expect(
      (error as ForeignClaimError).conflicts.map(({ claim }) => claim.mechanism).sort(),
    ).toEqual(['idempotency', 'single-flight']);
    const entries = await new RedisClaimRegistry(redis, { keyPrefix: prefix }).entries({
      mechanism: 'idempotency',
      namespace: 'claims',
      operation: 'pay',
      version: 'v1',
    });
    expect(entries.map(({ claim }) => claim?.owner)).toEqual(['orders-api']);
  });

  it('does not conflict when the records live apart (another key prefix for the store)', async () => {
    await engine('orders-api', `${runPrefix}o:`, `${runPrefix}f:`).registerClaims();
    const error = await engine('billing-api', `${runPrefix}b:`, `${runPrefix}f:`)
      .registerClaims()
      .catch((caught: unknown) => caught);
    // Only the SingleFlight keys are shared.
    expect((error as ForeignClaimError).conflicts.map(({ claim }) => claim.mechanism)).toEqual([
      'single-flight',
    ]);
  });
});

describe('RedisClaimRegistry on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    client = new Cluster([...cluster.nodes]);
  }, 60_000);

  afterAll(async () => {
    await client?.quit();
    await stopAllRedisServers();
  });

  it('keeps each operation in one slot, spread over the masters, and finds conflicts on each', async () => {
    const registry = new RedisClaimRegistry(client);
    const engine = createOncelyEngine({ namespace: 'cluster', service: 'orders-api' });
    for (let i = 0; i < 30; i += 1) {
      const operation = `op-${randomUUID().slice(0, 8)}`;
      engine.defineRoute(`Orders.op${i}`, { idempotent: { operation, scope: 'user.id' } });
    }
    const claims = engine.claims();
    expect(await registry.announce({ instance: 'o', claims, ttlMs: 60_000 })).toEqual({
      kind: 'clear',
    });
    const foreign = claims.map((claim) => ({ ...claim, owner: 'billing-api' }));
    const check = await registry.announce({ instance: 'b', claims: foreign, ttlMs: 60_000 });
    expect(check.kind === 'conflicts' && check.conflicts.length).toBe(30);
    const perMaster = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    expect(perMaster).toHaveLength(3);
    expect(perMaster.every((count) => count > 0)).toBe(true);
    expect(perMaster.reduce((sum, count) => sum + count, 0)).toBe(60);
    await registry.withdraw('o', claims);
    await registry.withdraw('b', foreign);
    const left = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    expect(left).toEqual([0, 0, 0]);
    await engine.close();
  }, 60_000);
});
