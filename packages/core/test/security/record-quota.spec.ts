import {
  InMemoryCapacityError,
  InMemoryIdempotencyRecordStore,
  InMemoryRecordQuota,
  OncelyConfigurationError,
  RecordQuotaExceededError,
  toProblemResponse,
} from '@oncely/core';
import { QuotaLimitedIdempotencyRecordStore } from '@oncely/core/adapter';
import { ManualClock } from '../flight/manual-clock.js';

const options = { leaseTtlMs: 10_000, retentionMs: 600_000 };
const digest = 'a'.repeat(64);
const ok = { status: 201, headers: {}, body: { kind: 'empty' as const } };

function setUp(limit = 3) {
  const clock = new ManualClock();
  const inner = new InMemoryIdempotencyRecordStore({ clock });
  const store = new QuotaLimitedIdempotencyRecordStore(inner, {
    quota: new InMemoryRecordQuota(clock),
    limit,
    windowMs: 60_000,
  });
  return { clock, inner, store };
}

describe('QuotaLimitedIdempotencyRecordStore', () => {
  it('lets exactly `limit` of many concurrent new records of one tenant through', async () => {
    const { inner, store } = setUp(3);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => store.begin(`shop:pay:v1:t-1:k${i}`, digest, options)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused).toHaveLength(17);
    expect(refused.every((o) => o.reason instanceof RecordQuotaExceededError)).toBe(true);
    // Refused records were released: nothing of them stays written.
    const live = await Promise.all(
      Array.from({ length: 20 }, (_, i) => inner.inspect(`shop:pay:v1:t-1:k${i}`)),
    );
    expect(live.filter((r) => r.kind !== 'absent')).toHaveLength(3);
  });

  it('counts per tenant, and never counts or refuses replays, 409s and 422s', async () => {
    const { store } = setUp(1);
    const first = await store.begin('shop:pay:v1:t-1:k1', digest, options);
    if (first.kind !== 'acquired') throw new Error(first.kind);
    expect((await store.begin('shop:pay:v1:t-1:k1', digest, options)).kind).toBe('in_progress');
    await store.complete(first.lease, ok);
    // Over the limit now, yet the retry is answered, and so is a reused key with another payload.
    expect(store.peekReplay!('shop:pay:v1:t-1:k1', digest, options)).toEqual(ok);
    expect((await store.begin('shop:pay:v1:t-1:k1', digest, options)).kind).toBe('replay');
    expect((await store.begin('shop:pay:v1:t-1:k1', 'b'.repeat(64), options)).kind).toBe(
      'mismatch',
    );
    await expect(store.begin('shop:pay:v1:t-1:k2', digest, options)).rejects.toThrow(
      RecordQuotaExceededError,
    );
    // Another tenant has its own count.
    expect((await store.begin('shop:pay:v1:t-2:k1', digest, options)).kind).toBe('acquired');
  });

  it('counts an identity once per window: a retry of a released record is neither refused nor counted again', async () => {
    const { inner, store } = setUp(2);
    const first = await store.begin('shop:pay:v1:t-1:k1', digest, options);
    if (first.kind !== 'acquired') throw new Error(first.kind);
    await store.release(first.lease); // the handler answered 500: nothing kept
    const retry = await store.begin('shop:pay:v1:t-1:k1', digest, options);
    if (retry.kind !== 'acquired') throw new Error(retry.kind);
    await store.complete(retry.lease, ok);
    // k1 holds one of the two places, not two: k2 still fits, k3 does not.
    expect((await store.begin('shop:pay:v1:t-1:k2', digest, options)).kind).toBe('acquired');
    await expect(store.begin('shop:pay:v1:t-1:k3', digest, options)).rejects.toThrow(
      RecordQuotaExceededError,
    );
    expect((await inner.inspect('shop:pay:v1:t-1:k1')).kind).toBe('completed');
  });

  it('lets a retry through while its tenant is over the limit', async () => {
    const { store } = setUp(1);
    const first = await store.begin('shop:pay:v1:t-1:k1', digest, options);
    if (first.kind !== 'acquired') throw new Error(first.kind);
    await store.release(first.lease);
    await expect(store.begin('shop:pay:v1:t-1:k2', digest, options)).rejects.toThrow(
      RecordQuotaExceededError,
    );
    expect((await store.begin('shop:pay:v1:t-1:k1', digest, options)).kind).toBe('acquired');
  });

  it('opens a new window after windowMs, and says when in Retry-After', async () => {
    const { clock, store } = setUp(1);
    clock.advance(60_000 - (clock.now() % 60_000)); // start of a window
    expect((await store.begin('shop:pay:v1:t-1:k1', digest, options)).kind).toBe('acquired');
    clock.advance(15_000);
    const error = await store.begin('shop:pay:v1:t-1:k2', digest, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordQuotaExceededError);
    const problem = toProblemResponse(error);
    expect(problem?.status).toBe(429);
    expect(problem?.body.type).toBe('urn:oncely:problem:record-quota-exceeded');
    expect(problem?.headers['retry-after']).toBe('45');
    expect(problem?.body.limit).toBe(1);
    clock.advance(45_000);
    expect((await store.begin('shop:pay:v1:t-1:k2', digest, options)).kind).toBe('acquired');
  });

  it('leaves identities outside scopeOf unlimited', async () => {
    const clock = new ManualClock();
    const store = new QuotaLimitedIdempotencyRecordStore(
      new InMemoryIdempotencyRecordStore({ clock }),
      {
        quota: new InMemoryRecordQuota(clock),
        limit: 1,
        windowMs: 1_000,
        scopeOf: (identity) => (identity.includes(':vip:') ? undefined : 'all'),
      },
    );
    for (let i = 0; i < 5; i++) {
      expect((await store.begin(`s:o:v:vip:k${i}`, digest, options)).kind).toBe('acquired');
    }
  });

  it('refuses a bad limit at start-up', () => {
    expect(
      () =>
        new QuotaLimitedIdempotencyRecordStore(new InMemoryIdempotencyRecordStore(), {
          quota: new InMemoryRecordQuota(),
          limit: 0,
          windowMs: 1_000,
        }),
    ).toThrow(OncelyConfigurationError);
  });
});

describe('InMemoryRecordQuota', () => {
  it('bounds the identities it counts: past windows go first, then a new one is refused', async () => {
    const clock = new ManualClock();
    const quota = new InMemoryRecordQuota(clock, { maxEntries: 3 });
    clock.advance(60_000 - (clock.now() % 60_000));
    expect(await quota.take('t-1', 'k1', 10, 1_000)).toMatchObject({ kind: 'counted' });
    expect(await quota.take('t-2', 'k1', 10, 60_000)).toMatchObject({ kind: 'counted' });
    expect(await quota.take('t-2', 'k2', 10, 60_000)).toMatchObject({ kind: 'counted' });
    clock.advance(1_000);

    // t-1's window is over: its count makes room.
    expect(await quota.take('t-3', 'k1', 10, 60_000)).toMatchObject({ kind: 'counted' });
    expect(quota.size).toBe(3);
    const refusal = await quota.take('t-4', 'k1', 10, 60_000).catch((error) => error);
    expect(refusal).toBeInstanceOf(InMemoryCapacityError);
    expect(refusal).toMatchObject({ option: 'maxEntries', limit: 3, retryAfterMs: 59_000 });
    // Identities already counted are still recognised at the bound.
    expect(await quota.take('t-2', 'k1', 10, 60_000)).toEqual({ kind: 'already_counted' });
  });

  it('gives an identity back, dropping a scope left with none', async () => {
    const clock = new ManualClock();
    const quota = new InMemoryRecordQuota(clock, { maxEntries: 1 });
    const counted = await quota.take('t-1', 'k1', 10, 60_000);
    if (counted.kind !== 'counted') throw new Error(counted.kind);
    await quota.giveBack('t-1', 'k1', counted.window);

    expect(quota.size).toBe(0);
    expect(await quota.take('t-2', 'k1', 10, 60_000)).toMatchObject({ kind: 'counted' });
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new InMemoryRecordQuota(undefined, { maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});
