import { Cluster } from 'ioredis';
import type { BeginOutcome, StoredResponse } from '@oncely/core';
import { idempotencyRecordStoreContract } from '@oncely/core/testing';
import { recordKeyHash } from '@oncely/core/adapter';
import { RedisIdempotencyRecordAdmin, RedisIdempotencyRecordStore } from '@oncely/redis';
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

  it("answers a miss from a previous version's record in another slot, and gives its claim back", async () => {
    const [v1, v2] = ['shop:refund:v1:tenant-z:r-1', 'shop:refund:v2:tenant-z:r-1'];
    const slotOf = (identity: string) => client.cluster('KEYSLOT', store.recordKey(identity));
    expect(await slotOf(v1)).not.toBe(await slotOf(v2));
    const held = await store.begin(v1, 'digest-a', options);
    if (held.kind !== 'acquired') throw new Error(`expected acquired, got ${held.kind}`);
    const v2Options = { ...options, previousIdentities: [v1] };

    expect((await store.begin(v2, 'digest-a', v2Options)).kind).toBe('in_progress');
    expect(await store.begin(v2, 'digest-b', v2Options)).toEqual({ kind: 'mismatch' });
    await store.complete(held.lease, response);
    expect(await store.begin(v2, 'digest-a', v2Options)).toEqual({
      kind: 'replay',
      response,
      previousIdentity: v1,
    });
    expect(await client.exists(store.recordKey(v2))).toBe(0);
  });

  it('lets at most one of 40 concurrent begins on two versions, each listing the other, acquire', async () => {
    const [v1, v2] = ['shop:refund:v1:tenant-z:r-race', 'shop:refund:v2:tenant-z:r-race'];
    const clients = Array.from({ length: 8 }, () => new Cluster([...cluster.nodes]));
    try {
      const stores = clients.map((own) => new RedisIdempotencyRecordStore(own));
      await Promise.all(clients.map((own) => own.ping()));
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          stores[i % stores.length]!.begin(i % 2 ? v1 : v2, 'digest-a', {
            ...options,
            previousIdentities: [i % 2 ? v2 : v1],
          }),
        ),
      );
      const winners = outcomes.filter(({ kind }) => kind === 'acquired').length;
      expect(winners).toBeLessThanOrEqual(1);
      expect(outcomes.filter(({ kind }) => kind === 'in_progress')).toHaveLength(40 - winners);
      const next = await store.begin(v2, 'digest-a', { ...options, previousIdentities: [v1] });
      expect(next.kind).toBe(winners === 1 ? 'in_progress' : 'acquired');
    } finally {
      await Promise.all(clients.map((own) => own.quit()));
    }
  });

  it("lists one operation's live records on every master, and deletes one with a notice every store hears", async () => {
    const admin = new RedisIdempotencyRecordAdmin(client);
    const v1 = Array.from({ length: 30 }, (_, i) => `shop:ship:v1:tenant-${i}:s-${i}`);
    const v2 = Array.from({ length: 6 }, (_, i) => `shop:ship:v2:tenant-${i}:s-${i}`);
    const running = 'shop:ship:v1:tenant-r:s-running';
    for (const identity of [...v1, ...v2]) {
      const outcome = await store.begin(identity, 'digest-a', { ...options, owner: 'shipping' });
      if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
      await store.complete(outcome.lease, response);
    }
    expect((await store.begin(running, 'digest-a', options)).kind).toBe('acquired');
    await store.begin('shop:shipment:v1:tenant-0:other', 'digest-a', options);
    const list = async (operation: string) => {
      const found = [];
      for await (const summary of admin.listRecords(operation, { batchSize: 5 })) {
        found.push(summary);
      }
      return found;
    };

    const listed = await list('shop:ship:v1');
    expect(listed.map(({ identity }) => identity).sort()).toEqual([...v1, running].sort());
    const one = listed.find(({ identity }) => identity === v1[0])!;
    expect(one).toEqual({
      identity: v1[0],
      keyHash: recordKeyHash(v1[0]!),
      kind: 'completed',
      owner: 'shipping',
      expiresAt: expect.any(Date),
    });
    expect(one.expiresAt.getTime() - Date.now()).toBeGreaterThan(options.retentionMs - 5_000);
    expect(listed.find(({ identity }) => identity === running)?.kind).toBe('in_progress');
    expect(await list('shop:ship')).toHaveLength(v1.length + v2.length + 1);
    const mastersHolding = await Promise.all(
      client.nodes('master').map(async (node) => (await node.dbsize()) > 0),
    );
    expect(mastersHolding).toEqual([true, true, true]);

    // No near cache on a Cluster client: a deleted record is gone for the very next call.
    expect(store.nearCacheStats()).toBeUndefined();
    expect((await store.begin(v1[1]!, 'digest-a', options)).kind).toBe('replay');
    expect(await admin.deleteRecord(v1[1]!)).toBe(true);
    expect((await store.begin(v1[1]!, 'digest-a', options)).kind).toBe('acquired');
    expect(await admin.deleteRecord(v1[1]!)).toBe(true);
    expect(await admin.deleteRecord(v1[1]!)).toBe(false);
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

describe('RedisIdempotencyRecordStore on a Redis Cluster meets the IdempotencyRecordStore contract', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    client = new Cluster([...cluster.nodes]);
  });

  afterAll(async () => {
    await client?.quit();
    await cluster?.stop();
  });

  // The cluster is this suite's own and identities are random per case: nothing to clean up.
  const cases = idempotencyRecordStoreContract(
    async () => ({
      store: new RedisIdempotencyRecordStore(client),
      advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      cleanup: async () => undefined,
    }),
    { expiresNatively: true, concurrency: 20 },
  );

  for (const c of cases) it(c.name, c.run);
});
