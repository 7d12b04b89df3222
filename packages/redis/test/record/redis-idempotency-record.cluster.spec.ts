import { Cluster } from 'ioredis';
import type { BeginOutcome, StoredResponse } from '@oncely/core';
import { RedisIdempotencyRecordStore } from '@oncely/redis';
import { startRedisCluster, stopAllRedisServers, type RedisCluster } from '@oncely/testing-kit';

const options = { leaseTtlMs: 30_000, retentionMs: 60_000 };
const response: StoredResponse = {
  status: 200,
  headers: { 'content-type': 'application/octet-stream' },
  body: { kind: 'bytes', value: Uint8Array.from([0, 255, 1, 254]) },
};

describe('RedisIdempotencyRecordStore on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let store: RedisIdempotencyRecordStore;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    client = new Cluster([...cluster.nodes]);
    store = new RedisIdempotencyRecordStore(client);
  });

  afterAll(async () => {
    await client?.quit();
    await stopAllRedisServers();
  });

  it('runs every script on the node owning the record, across all masters', async () => {
    const identities = Array.from({ length: 60 }, (_, i) => `shop:refund:v1:tenant-${i}:r-${i}`);

    const begun = await Promise.all(identities.map((id) => store.begin(id, 'digest-a', options)));
    for (const outcome of begun) {
      if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
      expect(await store.renew(outcome.lease, options.leaseTtlMs)).toBe(true);
      await store.complete(outcome.lease, response);
    }
    const replays = await Promise.all(identities.map((id) => store.begin(id, 'digest-a', options)));
    const mismatches = await Promise.all(
      identities.map((id) => store.begin(id, 'digest-b', options)),
    );

    expect(replays).toEqual(identities.map((): BeginOutcome => ({ kind: 'replay', response })));
    expect(mismatches).toEqual(identities.map(() => ({ kind: 'mismatch' })));
    const recordsPerMaster = await Promise.all(client.nodes('master').map((node) => node.dbsize()));
    expect(recordsPerMaster).toHaveLength(3);
    expect(recordsPerMaster.every((count) => count > 0)).toBe(true);
    expect(recordsPerMaster.reduce((sum, count) => sum + count, 0)).toBe(identities.length);
  });

  it('releases a record on its own node so the next begin acquires it again', async () => {
    const identity = 'shop:refund:v1:tenant-x:r-release';
    const first = await store.begin(identity, 'digest-a', options);
    if (first.kind !== 'acquired') throw new Error(`expected acquired, got ${first.kind}`);

    await store.release(first.lease);
    const second = await store.begin(identity, 'digest-a', options);

    expect(second.kind).toBe('acquired');
    expect(second.kind === 'acquired' && second.lease.fence).toBeGreaterThan(first.lease.fence);
  });

  it('creates, uses and closes its own cluster client from cluster nodes', async () => {
    const own = new RedisIdempotencyRecordStore({ clusterNodes: [...cluster.nodes] });
    const identity = 'shop:refund:v1:tenant-y:r-own-client';
    const outcome = await own.begin(identity, 'digest-a', options);
    if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
    await own.complete(outcome.lease, response);
    await own.close();

    expect(await store.begin(identity, 'digest-a', options)).toEqual({ kind: 'replay', response });
  });
});
