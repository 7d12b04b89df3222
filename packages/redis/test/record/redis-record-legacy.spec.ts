import type { StoredResponse } from '@oncely/core';
import { recordKeyHash } from '@oncely/core/adapter';
import { RedisIdempotencyRecordAdmin, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService } from '@oncely/testing-kit';
import type { Redis } from 'ioredis';
import { connect, deleteKeys, uniquePrefix } from '../support/redis-test-keys.js';

const options = { leaseTtlMs: 30_000, retentionMs: 60_000 };
const response: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/octet-stream' },
  body: { kind: 'bytes', value: Uint8Array.from([0, 255, 10, 1]) },
};

/**
 * Records as the previous version of the store wrote them (one hash at `<prefix>{<keyHash>}:record`,
 * the fields of its record-begin and record-complete scripts), written here by hand.
 */
describe('RedisIdempotencyRecordStore and records of the previous layout', () => {
  const prefix = uniquePrefix('legacy');
  let redis: Redis;
  let seq = 0;
  const nextIdentity = () => `shop:order-create:v1:tenant-1:order-${++seq}`;
  const legacyKey = (identity: string) => `${prefix}{${recordKeyHash(identity)}}:record`;

  async function writeLegacy(
    identity: string,
    state: 'completed' | 'in_progress',
    leaseExpiresAt = Date.now() + 30_000,
    service?: string,
  ) {
    const key = legacyKey(identity);
    const common = [
      'identity',
      identity,
      'digest',
      'd1',
      'owner',
      'old-token',
      'fence',
      '1700000000000000',
      ...(service === undefined ? [] : ['service', service]),
    ];
    if (state === 'completed') {
      await redis.hset(
        key,
        ...common,
        'status',
        'completed',
        'retention',
        '60000',
        'createdAt',
        String(Date.now()),
        'completedAt',
        String(Date.now()),
        'responseStatus',
        '201',
        'responseHeaders',
        JSON.stringify(response.headers),
        'bodyKind',
        'bytes',
        'body',
        Buffer.from([0, 255, 10, 1]),
      );
    } else {
      await redis.hset(
        key,
        ...common,
        'status',
        'in_progress',
        'retention',
        '60000',
        'createdAt',
        String(Date.now()),
        'leaseExpiresAt',
        String(leaseExpiresAt),
      );
    }
    await redis.pexpire(key, 90_000);
  }

  beforeAll(async () => {
    await requireService('redis');
    redis = connect();
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });

  it('replays a record an old process completed, and answers 409 for one it runs', async () => {
    const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
    const [completed, running] = [nextIdentity(), nextIdentity()];
    await writeLegacy(completed, 'completed');
    await writeLegacy(running, 'in_progress');

    expect(await store.begin(completed, 'd1', options)).toEqual({ kind: 'replay', response });
    expect(await store.begin(completed, 'd2', options)).toEqual({ kind: 'mismatch' });
    expect((await store.begin(running, 'd1', options)).kind).toBe('in_progress');
    // Nothing claimed meanwhile under the new layout.
    expect(await redis.exists(store.recordKey(completed), store.recordKey(running))).toBe(0);
  });

  it('replays an old record of a name the caller lists in ownerAliases, and refuses it to an unrelated service', async () => {
    const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
    const identity = nextIdentity();
    await writeLegacy(identity, 'completed', undefined, 'shop');
    const renamed = { ...options, owner: 'shop-api', ownerAliases: new Set(['shop-web', 'shop']) };

    expect(await store.begin(identity, 'd1', renamed)).toEqual({ kind: 'replay', response });
    expect(await store.begin(identity, 'd1', { ...options, owner: 'shop-apis' })).toEqual({
      kind: 'foreign_owner',
      owner: 'shop',
    });
    const next = identity.replace(':v1:', ':v2:');
    expect(await store.begin(next, 'd1', { ...renamed, previousIdentities: [identity] })).toEqual({
      kind: 'replay',
      response,
      previousIdentity: identity,
    });
  });

  it('takes over an abandoned old record and deletes it, so its old holder cannot confirm', async () => {
    const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
    const identity = nextIdentity();
    await writeLegacy(identity, 'in_progress', Date.now() - 1000);

    const outcome = await store.begin(identity, 'd1', options);
    expect(outcome.kind).toBe('acquired');
    expect(outcome.kind === 'acquired' && outcome.lease.fence).toBeGreaterThan(1700000000000000);
    expect(await redis.exists(legacyKey(identity))).toBe(0);
  });

  it("answers a new version's miss from an old process's record of the previous version", async () => {
    const store = new RedisIdempotencyRecordStore(redis, { keyPrefix: prefix });
    const v1 = nextIdentity();
    const v2 = v1.replace(':v1:', ':v2:');
    await writeLegacy(v1, 'completed');

    expect(await store.begin(v2, 'd1', { ...options, previousIdentities: [v1] })).toEqual({
      kind: 'replay',
      response,
      previousIdentity: v1,
    });
    expect(await redis.exists(store.recordKey(v2))).toBe(0);
  });

  it("ignores them with legacyRecords: 'ignore'; the admin still inspects and deletes them", async () => {
    const store = new RedisIdempotencyRecordStore(redis, {
      keyPrefix: prefix,
      legacyRecords: 'ignore',
    });
    const admin = new RedisIdempotencyRecordAdmin(redis, { keyPrefix: prefix });
    const identity = nextIdentity();
    await writeLegacy(identity, 'completed');

    const inspected = await admin.inspect(identity);
    expect(inspected).toMatchObject({ kind: 'completed', fingerprint: 'd1', response });
    expect((await store.begin(identity, 'd1', options)).kind).toBe('acquired');
    expect(await admin.deleteRecord(identity)).toBe(true);
    expect(await redis.exists(legacyKey(identity), store.recordKey(identity))).toBe(0);
    expect(
      () => new RedisIdempotencyRecordStore(redis, { legacyRecords: 'never' as 'ignore' }),
    ).toThrow(/legacyRecords/);
  });
});
