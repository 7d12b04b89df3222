import { randomBytes, randomUUID } from 'node:crypto';
import {
  LeaseLostError,
  OncelyAdmin,
  RecordQuotaExceededError,
  SealedDataError,
  type StoredResponse,
} from '@oncely/core';
import {
  EncryptedFlightCoordinator,
  EncryptedIdempotencyRecordStore,
  QuotaLimitedIdempotencyRecordStore,
} from '@oncely/core/adapter';
import {
  RedisFlightCoordinator,
  RedisIdempotencyRecordAdmin,
  RedisIdempotencyRecordStore,
  RedisRecordQuota,
  recordKey as recordKeyOf,
} from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { Redis } from 'ioredis';
import { deleteKeys, uniquePrefix } from '../support/redis-test-keys.js';

const k1 = { id: 'k1', secret: randomBytes(32) };
const k2 = { id: 'k2', secret: randomBytes(32) };
const options = { leaseTtlMs: 10_000, retentionMs: 60_000 };
const digest = 'e'.repeat(64);
const response: StoredResponse = {
  status: 201,
  headers: { location: '/payments/pay-secret-1' },
  body: { kind: 'json', value: { pan: '4111111111111111', amount: '100.00' } },
};

describe('security features on real Redis', () => {
  let redis: Redis;
  const prefix = uniquePrefix('security');
  const identity = () => `shop:pay:v1:t-1:${randomUUID()}`;

  beforeAll(async () => {
    await requireService('redis');
    redis = new Redis(services.redis);
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  const plainStore = (nearCache?: false) =>
    new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix, nearCache });
  const recordKey = (id: string) => recordKeyOf(prefix, id);

  it('keeps only ciphertext in the record, and replays the response', async () => {
    const store = new EncryptedIdempotencyRecordStore(plainStore(), { keys: [k1] });
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.complete(begun.lease, response);
    const raw = (await redis.getBuffer(recordKey(id)))!;
    expect(raw.includes(Buffer.from('4111111111111111'))).toBe(false);
    expect(raw.includes(Buffer.from('pay-secret-1'))).toBe(false);
    // The response part: `<status> <bodyKind> <headersLen>\n<headers><body>`, headers empty.
    expect(raw.includes(Buffer.from(' 2\n{}OE1'))).toBe(true);
    expect(await store.begin(id, digest, options)).toEqual({ kind: 'replay', response });
  });

  it('opens records sealed before a rotation, and refuses them once their key is dropped', async () => {
    const id = identity();
    const before = new EncryptedIdempotencyRecordStore(plainStore(), { keys: [k1] });
    const begun = await before.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await before.complete(begun.lease, response);
    const rotated = new EncryptedIdempotencyRecordStore(plainStore(), { keys: [k2, k1] });
    expect(await rotated.begin(id, digest, options)).toEqual({ kind: 'replay', response });
    const dropped = new EncryptedIdempotencyRecordStore(plainStore(), { keys: [k2] });
    await expect(dropped.begin(id, digest, options)).rejects.toThrow(
      expect.objectContaining({ failure: 'unknown_key', keyId: 'k1' }),
    );
  });

  it('refuses a record whose stored ciphertext was altered, with a typed error', async () => {
    // No near cache: this process would replay what it completed itself, untouched.
    const store = new EncryptedIdempotencyRecordStore(plainStore(false), { keys: [k1] });
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.complete(begun.lease, response);
    const value = (await redis.getBuffer(recordKey(id)))!;
    value[value.length - 1] = (value[value.length - 1] as number) ^ 0xff;
    await redis.set(recordKey(id), value, 'KEEPTTL');
    await expect(store.begin(id, digest, options)).rejects.toThrow(SealedDataError);
    // Status in clear, swapped: the status is authenticated too.
    value[value.length - 1] = (value[value.length - 1] as number) ^ 0xff;
    const statusAt = value.indexOf(Buffer.from(`${id}${response.status} `)) + Buffer.byteLength(id);
    value.write('200', statusAt, 'latin1');
    await redis.set(recordKey(id), value, 'KEEPTTL');
    await expect(store.begin(id, digest, options)).rejects.toThrow(
      expect.objectContaining({ failure: 'tampered' }),
    );
  });

  it('keeps cached flight results sealed in Redis', async () => {
    // No near cache: the tampered value below must be read from Redis.
    const inner = new RedisFlightCoordinator(redis, { keyPrefix: prefix, nearCache: false });
    const coordinator = new EncryptedFlightCoordinator(inner, { keys: [k1] });
    const key = `shop:quote:v1:t-1:cart-1:${'0'.repeat(32)}`;
    expect((await coordinator.acquire(key, 'o1', 5_000)).kind).toBe('leader');
    expect(
      await coordinator.complete(key, 'o1', {
        kind: 'result',
        payload: '{"pan":"4111"}',
        ttlMs: 60_000,
      }),
    ).toBe(true);
    const raw = (await redis.get(`${prefix}{${key}}:flight`)) as string;
    expect(raw.startsWith('Roe1:')).toBe(true);
    expect(raw.includes('4111')).toBe(false);
    expect(await coordinator.acquire(key, 'o2', 5_000)).toEqual({
      kind: 'cached',
      payload: '{"pan":"4111"}',
    });
    await redis.set(
      `${prefix}{${key}}:flight`,
      `Roe1:${Buffer.from('garbage-garbage-garbage-garbage-garbage').toString('base64')}`,
      'PX',
      60_000,
    );
    await expect(coordinator.acquire(key, 'o3', 5_000)).rejects.toThrow(SealedDataError);
    await coordinator.close();
  });

  it('administers records: inspect, force-release a stuck key, leave completed ones', async () => {
    const store = plainStore();
    const admin = new OncelyAdmin(store, {
      admin: new RedisIdempotencyRecordAdmin(redis, { keyPrefix: prefix }),
      coordinator: 'none',
    });
    const id = identity();
    expect((await admin.inspect(id)).kind).toBe('absent');
    const stuck = await store.begin(id, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    expect(await admin.inspect(id)).toMatchObject({
      kind: 'in_progress',
      fingerprint: digest,
      fence: stuck.lease.fence,
    });
    expect(await admin.forceRelease(id)).toEqual({
      kind: 'released',
      fence: stuck.lease.fence,
      leases: [],
    });
    await expect(store.complete(stuck.lease, response)).rejects.toThrow(LeaseLostError);
    const next = await store.begin(id, digest, options);
    if (next.kind !== 'acquired') throw new Error(next.kind);
    expect(next.lease.fence).toBeGreaterThan(stuck.lease.fence);
    await store.complete(next.lease, response);
    const done = await admin.inspect(id);
    expect(done).toMatchObject({ kind: 'completed', response });
    expect(await admin.forceRelease(id)).toEqual({ kind: 'completed', leases: [] });
    expect(await redis.exists(recordKey(id))).toBe(1);
  });

  it('frees the guard and flight leases on Redis: holders lose them, waiters wake, fences grow', async () => {
    const coordinator = new RedisFlightCoordinator(redis, { keyPrefix: prefix });
    const store = plainStore();
    const admin = new OncelyAdmin(store, {
      admin: new RedisIdempotencyRecordAdmin(redis, { keyPrefix: prefix }),
      coordinator,
    });
    const id = identity();
    const key = `${id}:0123456789abcdef`;
    const stuck = await store.begin(id, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    const guard = await coordinator.acquire(`${id}:idem`, 'old-guard', 10_000);
    await coordinator.acquire(key, 'old-flight', 10_000);
    expect(await coordinator.acquire(`${id}:idem`, 'waiter', 10_000)).toMatchObject({
      kind: 'busy',
    });
    const woken = coordinator.waitForNotice(`${id}:idem`, 60_000);

    expect(await admin.forceRelease(key)).toEqual({
      kind: 'released',
      fence: stuck.lease.fence,
      leases: ['guard', 'flight'],
    });
    await woken;
    expect(await coordinator.renew(`${id}:idem`, 'old-guard', 10_000)).toBe(false);
    expect(
      await coordinator.complete(key, 'old-flight', { kind: 'result', payload: '1', ttlMs: 1_000 }),
    ).toBe(false);
    const next = await coordinator.acquire(`${id}:idem`, 'new-guard', 10_000);
    expect(next.kind).toBe('leader');
    expect(next.kind === 'leader' && guard.kind === 'leader' && next.fence > guard.fence).toBe(
      true,
    );
    expect(await admin.forceRelease(id)).toEqual({ kind: 'absent', leases: ['guard'] });
    await coordinator.close();
  });

  it('shows an encrypted record opened to an operator holding the keys', async () => {
    const store = new EncryptedIdempotencyRecordStore(plainStore(), { keys: [k1] });
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.complete(begun.lease, response);
    const operator = new RedisIdempotencyRecordAdmin(redis, { keyPrefix: prefix });
    const sealed = await new OncelyAdmin(store, { admin: operator, coordinator: 'none' }).inspect(
      id,
    );
    expect(sealed.kind === 'completed' && sealed.response.body.kind).toBe('bytes');
    const opened = await new OncelyAdmin(store, {
      admin: operator,
      coordinator: 'none',
      encryption: { keys: [k1] },
    }).inspect(id);
    expect(opened).toMatchObject({ kind: 'completed', response });
  });

  it('counts a retry on another node once: a released record is retried past the limit', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const quota = new RedisRecordQuota(redis, { keyPrefix: prefix });
    const [a, b] = [1, 2].map(
      () =>
        new QuotaLimitedIdempotencyRecordStore(plainStore(), {
          quota,
          limit: 2,
          windowMs: 600_000,
        }),
    );
    const first = await a!.begin(`shop:pay:v1:${tenant}:k1`, digest, options);
    if (first.kind !== 'acquired') throw new Error(first.kind);
    await a!.release(first.lease); // answered 500 on node a
    const retry = await b!.begin(`shop:pay:v1:${tenant}:k1`, digest, options);
    expect(retry.kind).toBe('acquired');
    expect((await b!.begin(`shop:pay:v1:${tenant}:k2`, digest, options)).kind).toBe('acquired');
    await expect(a!.begin(`shop:pay:v1:${tenant}:k3`, digest, options)).rejects.toThrow(
      RecordQuotaExceededError,
    );
    const window = Math.floor(Date.now() / 600_000) * 600_000;
    expect(await redis.scard(quota.countedKey(`shop:${tenant}`, window))).toBe(2);
  });

  it('caps new records per tenant across stores sharing one Redis, exactly', async () => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const nodes = [1, 2, 3].map(
      () =>
        new QuotaLimitedIdempotencyRecordStore(plainStore(), {
          quota: new RedisRecordQuota(redis, { keyPrefix: prefix }),
          limit: 5,
          windowMs: 600_000,
        }),
    );
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        nodes[i % 3]!.begin(`shop:pay:v1:${tenant}:k${i}`, digest, options),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(
      outcomes.filter(
        (o) => o.status === 'rejected' && o.reason instanceof RecordQuotaExceededError,
      ),
    ).toHaveLength(25);
    const stored = await Promise.all(
      Array.from({ length: 30 }, (_, i) => redis.exists(recordKey(`shop:pay:v1:${tenant}:k${i}`))),
    );
    expect(stored.filter((n) => n === 1)).toHaveLength(5);
  });
});
