import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { jest } from '@jest/globals';
import {
  LeaseLostError,
  type BeginOutcome,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { InvalidRedisOptionError, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import {
  connect,
  deleteKeys,
  eventually,
  scanKeys,
  sleep,
  uniquePrefix,
} from '../support/redis-test-keys.js';

const longLease = { leaseTtlMs: 30_000, retentionMs: 60_000 };
const created: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/orders/77' },
  body: { kind: 'json', value: { id: 77, note: 'Grüße, 世界 👋' } },
};

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') {
    throw new Error(`expected acquired, got ${JSON.stringify(outcome)}`);
  }
  return outcome.lease;
}

function kinds(outcomes: BeginOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { kind } of outcomes) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

describe('RedisIdempotencyRecordStore', () => {
  const prefix = uniquePrefix('record');
  let redis: Redis;
  let store: RedisIdempotencyRecordStore;
  let identitySeq = 0;
  const nextIdentity = () => `shop:order-create:v1:tenant-1:order-${++identitySeq}`;

  beforeAll(async () => {
    await requireService('redis');
    redis = connect();
    store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  /** `count` stores, each on its own connection, ready before the first call is fired. */
  async function storesOnSeparateConnections(count: number) {
    const clients = Array.from({ length: count }, connect);
    await Promise.all(clients.map((client) => client.ping()));
    const stores = clients.map(
      (client) => new RedisIdempotencyRecordStore(client, { keyPrefix: prefix }),
    );
    return { stores, close: () => Promise.all(clients.map((client) => client.quit())) };
  }

  it('keeps each record in one hash-tagged key named after the SHA-256 of its identity, and no other key', async () => {
    const identity = nextIdentity();
    const lease = acquired(await store.begin(identity, 'digest-a', longLease));
    const keyHash = createHash('sha256').update(identity).digest('hex');

    expect(lease.keyHash).toBe(keyHash);
    const key = `${prefix}shop:order-create:v1:{${keyHash}}:record`;
    expect(store.recordKey(identity)).toBe(key);
    expect((await redis.get(key))?.endsWith(`digest-a${identity}`)).toBe(true);
    expect(await scanKeys(redis, `${prefix}*{${keyHash}}*`)).toEqual([key]);
  });

  it('20 concurrent begins from 20 connections: one acquires, 19 are in progress, all later ones replay', async () => {
    const { stores, close } = await storesOnSeparateConnections(20);
    try {
      const identity = nextIdentity();
      const first = await Promise.all(stores.map((s) => s.begin(identity, 'digest-a', longLease)));

      expect(kinds(first)).toEqual({ acquired: 1, in_progress: 19 });
      for (const outcome of first) {
        if (outcome.kind === 'in_progress') expect(outcome.retryAfterMs).toBeGreaterThan(0);
      }
      const winner = first.find((outcome) => outcome.kind === 'acquired');
      await store.complete(acquired(winner!), created);

      const later = await Promise.all(stores.map((s) => s.begin(identity, 'digest-a', longLease)));
      expect(later).toEqual(stores.map(() => ({ kind: 'replay', response: created })));
    } finally {
      await close();
    }
  });

  it("reads the previous versions' records and claims in one script on standalone Redis", async () => {
    const identity = nextIdentity();
    const [v1, v0] = [`${identity}-v1`, `${identity}-v0`];
    await store.complete(acquired(await store.begin(v0, 'digest-a', longLease)), created);
    const client = connect();
    try {
      const own = new RedisIdempotencyRecordStore(client, { keyPrefix: prefix });
      await client.ping();
      const sent = jest.spyOn(client, 'sendCommand');
      const options = { ...longLease, previousIdentities: [v1, v0] };

      const outcome = await own.begin(identity, 'digest-a', options);

      expect(outcome).toEqual({ kind: 'replay', response: created, previousIdentity: v0 });
      // One command: EVALSHA, or EVAL on a connection that has not run the script yet.
      expect(sent.mock.calls).toHaveLength(1);
      expect(sent.mock.calls[0]?.[0].name).toMatch(/^eval(sha)?$/);
      expect(sent.mock.calls[0]?.[0].args.slice(1, 5)).toEqual([
        '3',
        ...[identity, v1, v0].map((id) => own.recordKey(id)),
      ]);
    } finally {
      await client.quit();
    }
  });

  it('40 concurrent begins from 40 connections on two versions, each listing the other: exactly one acquires', async () => {
    const { stores, close } = await storesOnSeparateConnections(40);
    try {
      const v1 = nextIdentity();
      const v2 = `${v1}-v2`;
      const outcomes = await Promise.all(
        stores.map((s, i) =>
          s.begin(i % 2 ? v1 : v2, 'digest-a', {
            ...longLease,
            previousIdentities: [i % 2 ? v2 : v1],
          }),
        ),
      );

      expect(kinds(outcomes)).toEqual({ acquired: 1, in_progress: 39 });
    } finally {
      await close();
    }
  });

  it('answers mismatch to another digest and leaves the record byte for byte as it was', async () => {
    const inProgress = nextIdentity();
    const completed = nextIdentity();
    acquired(await store.begin(inProgress, 'digest-a', longLease));
    await store.complete(acquired(await store.begin(completed, 'digest-a', longLease)), created);
    const keyOf = (identity: string) => store.recordKey(identity);
    const before = await Promise.all(
      [inProgress, completed].map((id) => redis.getBuffer(keyOf(id))),
    );

    expect(await store.begin(inProgress, 'digest-b', longLease)).toEqual({ kind: 'mismatch' });
    expect(await store.begin(completed, 'digest-b', longLease)).toEqual({ kind: 'mismatch' });

    const after = await Promise.all(
      [inProgress, completed].map((id) => redis.getBuffer(keyOf(id))),
    );
    expect(after).toEqual(before);
    expect((await store.begin(inProgress, 'digest-a', longLease)).kind).toBe('in_progress');
    expect(await store.begin(completed, 'digest-a', longLease)).toEqual({
      kind: 'replay',
      response: created,
    });
  });

  it('after the lease expires, 20 concurrent takeovers: one wins with a higher fence and the old owner is locked out', async () => {
    const { stores, close } = await storesOnSeparateConnections(20);
    try {
      const identity = nextIdentity();
      const short = { leaseTtlMs: 150, retentionMs: 60_000 };
      const old = acquired(await store.begin(identity, 'digest-a', short));
      await sleep(300);

      const takeovers = await Promise.all(
        stores.map((s) => s.begin(identity, 'digest-a', longLease)),
      );
      expect(kinds(takeovers)).toEqual({ acquired: 1, in_progress: 19 });
      const fresh = acquired(takeovers.find((outcome) => outcome.kind === 'acquired')!);
      expect(fresh.fence).toBeGreaterThan(old.fence);
      expect(fresh.ownerToken).not.toBe(old.ownerToken);

      await expect(store.complete(old, created)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.complete(old, created)).rejects.toMatchObject({
        code: 'lease_lost',
        identity,
        fence: old.fence,
      });
      expect(await store.renew(old, 30_000)).toBe(false);
      await store.release(old);
      expect((await store.begin(identity, 'digest-a', longLease)).kind).toBe('in_progress');

      const response: StoredResponse = { status: 200, headers: {}, body: { kind: 'empty' } };
      await store.complete(fresh, response);
      expect(await store.begin(identity, 'digest-a', longLease)).toEqual({
        kind: 'replay',
        response,
      });
    } finally {
      await close();
    }
  });

  // After a reply this large, redis-parser shrinks its shared buffer pool on a timer for about two
  // seconds, so Jest may say it "did not exit one second after the test run"; it does exit.
  it('replays a 1 MB binary body byte for byte, and Unicode text bodies exactly', async () => {
    const binary = randomBytes(1024 * 1024);
    // Every byte value, including NUL and invalid UTF-8 sequences, at a known place.
    for (let i = 0; i < 256; i++) binary[i] = i;
    const text = 'Zoë — ½ · 中文 · עברית · 😀\u0000\r\n\uFEFF';
    const bodies: StoredResponse[] = [
      {
        status: 200,
        headers: { 'content-type': 'application/octet-stream' },
        body: { kind: 'bytes', value: binary },
      },
      {
        status: 200,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: { kind: 'bytes', value: new TextEncoder().encode(text) },
      },
      {
        status: 200,
        headers: {},
        body: { kind: 'json', value: { text, list: [null, true, -0.5, 1e21] } },
      },
      { status: 204, headers: {}, body: { kind: 'empty' } },
    ];

    for (const response of bodies) {
      const identity = nextIdentity();
      await store.complete(acquired(await store.begin(identity, 'digest-a', longLease)), response);
      const replay = await store.begin(identity, 'digest-a', longLease);

      if (replay.kind !== 'replay') throw new Error(`expected replay, got ${replay.kind}`);
      const { body, ...rest } = replay.response;
      const { body: expectedBody, ...expectedRest } = response;
      expect(rest).toEqual(expectedRest);
      if (expectedBody.kind === 'bytes') {
        // Buffer#equals: Jest's toEqual walks a 1 MB array element by element, for seconds.
        expect(body.kind === 'bytes' && Buffer.from(body.value).equals(expectedBody.value)).toBe(
          true,
        );
        expect(body.kind === 'bytes' && body.value.byteLength).toBe(expectedBody.value.byteLength);
      } else {
        expect(body).toEqual(expectedBody);
      }
    }
  });

  it('keeps an unfinished record for lease + retention, a completed one for the retention', async () => {
    const identity = nextIdentity();
    const lease = acquired(
      await store.begin(identity, 'digest-a', { leaseTtlMs: 10_000, retentionMs: 50_000 }),
    );
    const key = store.recordKey(lease.identity);

    const inProgressTtl = await redis.pttl(key);
    expect(inProgressTtl).toBeGreaterThan(50_000);
    expect(inProgressTtl).toBeLessThanOrEqual(60_000);

    await store.complete(lease, created);
    const completedTtl = await redis.pttl(key);
    expect(completedTtl).toBeGreaterThan(0);
    expect(completedTtl).toBeLessThanOrEqual(50_000);
  });

  it('issues ever higher fences after the record was released or expired', async () => {
    const identity = nextIdentity();
    const first = acquired(await store.begin(identity, 'digest-a', longLease));
    await store.release(first);
    expect(await redis.exists(store.recordKey(first.identity))).toBe(0);

    const second = acquired(
      await store.begin(identity, 'digest-a', { leaseTtlMs: 50, retentionMs: 50 }),
    );
    expect(second.fence).toBeGreaterThan(first.fence);
    while ((await redis.exists(store.recordKey(second.identity))) === 1) await sleep(20);

    const third = acquired(await store.begin(identity, 'digest-a', longLease));
    expect(third.fence).toBeGreaterThan(second.fence);
    expect(Number.isSafeInteger(third.fence)).toBe(true);
  });

  it('renew keeps the lease from being taken over; renew, release and complete check the owner', async () => {
    const identity = nextIdentity();
    const lease = acquired(
      await store.begin(identity, 'digest-a', { leaseTtlMs: 150, retentionMs: 60_000 }),
    );
    expect(await store.renew(lease, 30_000)).toBe(true);
    await sleep(300);
    expect((await store.begin(identity, 'digest-a', longLease)).kind).toBe('in_progress');

    const forged: RecordLease = { ...lease, ownerToken: 'someone-else' };
    const staleFence: RecordLease = { ...lease, fence: lease.fence - 1 };
    expect(await store.renew(forged, 30_000)).toBe(false);
    expect(await store.renew(staleFence, 30_000)).toBe(false);
    await store.release(forged);
    await store.release(staleFence);
    await expect(store.complete(forged, created)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store.complete(staleFence, created)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store.begin(identity, 'digest-a', longLease)).kind).toBe('in_progress');

    await store.release(lease);
    expect((await store.begin(identity, 'digest-a', longLease)).kind).toBe('acquired');
  });

  it('a completed record survives its owner releasing, renewing or completing again', async () => {
    const identity = nextIdentity();
    const lease = acquired(await store.begin(identity, 'digest-a', longLease));
    await store.complete(lease, created);

    await expect(
      store.complete(lease, { status: 500, headers: {}, body: { kind: 'empty' } }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await store.release(lease);
    expect(await store.renew(lease, 30_000)).toBe(false);
    expect(await store.begin(identity, 'digest-a', longLease)).toEqual({
      kind: 'replay',
      response: created,
    });
  });

  it('an expired lease nobody took over still lets its owner complete: the fence decides', async () => {
    const identity = nextIdentity();
    const lease = acquired(
      await store.begin(identity, 'digest-a', { leaseTtlMs: 100, retentionMs: 60_000 }),
    );
    await sleep(200);

    await store.complete(lease, created);
    expect(await store.begin(identity, 'digest-a', longLease)).toEqual({
      kind: 'replay',
      response: created,
    });
  });

  it('takes over an expired lease whatever the digest, as if the record were absent', async () => {
    const identity = nextIdentity();
    const abandoned = acquired(
      await store.begin(identity, 'digest-a', { leaseTtlMs: 100, retentionMs: 60_000 }),
    );
    await sleep(200);

    const next = acquired(await store.begin(identity, 'digest-b', longLease));
    expect(next.fence).toBe(abandoned.fence + 1);
    expect(await store.begin(identity, 'digest-a', longLease)).toEqual({ kind: 'mismatch' });
    expect((await store.begin(identity, 'digest-b', longLease)).kind).toBe('in_progress');
  });

  it('never issues one fence twice while 20 connections race to acquire and release one identity', async () => {
    const { stores, close } = await storesOnSeparateConnections(20);
    try {
      const identity = nextIdentity();
      const fences: number[] = [];
      await Promise.all(
        stores.map(async (s) => {
          for (let round = 0; round < 50; round++) {
            const outcome = await s.begin(identity, 'digest-a', longLease);
            if (outcome.kind === 'acquired') {
              fences.push(outcome.lease.fence);
              await s.release(outcome.lease);
            }
          }
        }),
      );

      expect(fences.length).toBeGreaterThan(10);
      expect(new Set(fences).size).toBe(fences.length);
    } finally {
      await close();
    }
  });

  it('purgeExpired deletes nothing, since Redis expires every record on its own', async () => {
    const identity = nextIdentity();
    const lease = acquired(await store.begin(identity, 'digest-a', longLease));

    expect(await store.purgeExpired(1000)).toBe(0);
    expect(await redis.exists(store.recordKey(lease.identity))).toBe(1);
  });

  it('defines its scripts once per client, however many stores share it', async () => {
    const client = connect();
    try {
      const defineCommand = jest.spyOn(client, 'defineCommand');
      new RedisIdempotencyRecordStore(client, { keyPrefix: prefix });
      new RedisIdempotencyRecordStore(client, { keyPrefix: prefix });
      expect(defineCommand).toHaveBeenCalledTimes(5);
    } finally {
      await client.quit();
    }
  });

  it('quits a client it created and leaves a client passed in open', async () => {
    const own = new RedisIdempotencyRecordStore(
      { host: services.redis.host, port: services.redis.port },
      { keyPrefix: prefix },
    );
    acquired(await own.begin(nextIdentity(), 'digest-a', longLease));
    await own.close();
    await expect(own.begin(nextIdentity(), 'digest-a', longLease)).rejects.toThrow();

    const client = connect();
    const borrowed = new RedisIdempotencyRecordStore(client, { keyPrefix: prefix });
    await borrowed.close();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  it('creates its client from a redis:// URL and quits it on close', async () => {
    const name = `oncely-store-url-${randomBytes(4).toString('hex')}`;
    const connections = async () =>
      ((await redis.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.includes(` name=${name} `)).length;
    const { host, port } = services.redis;
    const own = new RedisIdempotencyRecordStore(
      `redis://${host}:${port}/0?connectionName=${name}`,
      { keyPrefix: prefix },
    );
    acquired(await own.begin(nextIdentity(), 'digest-a', longLease));
    // The client, and the near cache's subscriber duplicated from it.
    await eventually(async () => (await connections()) === 2, 'the subscriber to connect');

    await own.close();
    await eventually(async () => (await connections()) === 0, 'the URL client to quit');
  });

  it('refuses a string that is not a redis:// or rediss:// URL', () => {
    expect(() => new RedisIdempotencyRecordStore('localhost:6379')).toThrow(
      /"connection": expected a redis:\/\/ or rediss:\/\/ URL/,
    );
  });

  it('rejects durations that are not positive and key prefixes with braces', async () => {
    await expect(
      store.begin(nextIdentity(), 'd', { leaseTtlMs: 0, retentionMs: 1000 }),
    ).rejects.toThrow(/"leaseTtlMs": expected a positive number of milliseconds, got 0/);
    await expect(
      store.begin(nextIdentity(), 'd', { leaseTtlMs: 1000, retentionMs: Number.NaN }),
    ).rejects.toBeInstanceOf(InvalidRedisOptionError);
    await expect(
      store.renew(acquired(await store.begin(nextIdentity(), 'd', longLease)), -1),
    ).rejects.toMatchObject({ code: 'invalid_redis_option', option: 'leaseTtlMs' });
    expect(() => new RedisIdempotencyRecordStore(redis, { keyPrefix: 'tenant-{1}:' })).toThrow(
      InvalidRedisOptionError,
    );
  });
});
