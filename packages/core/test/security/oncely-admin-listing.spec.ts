import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  LeaseLostError,
  OncelyAdmin,
  OncelyConfigurationError,
  type RecordSummary,
} from '@oncely/core';
import { ManualClock } from '../flight/manual-clock.js';

const digest = 'd'.repeat(64);
const options = { leaseTtlMs: 10_000, retentionMs: 60_000, owner: 'shop-api' };
const ok = { status: 201, headers: {}, body: { kind: 'json' as const, value: { id: 1 } } };

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('OncelyAdmin listings and purge on the in-memory store and coordinator', () => {
  it('lists exactly the live records of an operation, by version or across versions', async () => {
    const clock = new ManualClock();
    const store = new InMemoryIdempotencyRecordStore({ clock });
    const admin = new OncelyAdmin(store, { coordinator: 'none' });
    for (let i = 0; i < 5; i++) {
      const begun = await store.begin(`shop:pay:v1:t:${i}`, digest, options);
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      if (i % 2 === 0) await store.complete(begun.lease, ok);
    }
    await store.begin('shop:pay:v2:t:9', digest, { ...options, owner: undefined });
    await store.begin('shop:payout:v1:t:1', digest, options);

    const v1 = await collect(admin.listRecords('shop:pay:v1'));
    expect(v1.map((record) => record.identity).sort()).toEqual(
      [0, 1, 2, 3, 4].map((i) => `shop:pay:v1:t:${i}`),
    );
    expect(v1.find((record) => record.identity === 'shop:pay:v1:t:0')).toEqual<RecordSummary>({
      identity: 'shop:pay:v1:t:0',
      keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
      kind: 'completed',
      owner: 'shop-api',
      expiresAt: new Date(clock.now() + 60_000),
    });
    expect(v1.filter((record) => record.kind === 'in_progress')).toHaveLength(2);
    expect(await collect(admin.listRecords('shop:pay'))).toHaveLength(6);
    expect((await admin.inspect('shop:pay:v1:t:1')).kind === 'in_progress').toBe(true);
    expect(await admin.inspect('shop:pay:v1:t:1')).toMatchObject({ owner: 'shop-api' });

    clock.advance(10_000);
    expect(await collect(admin.listRecords('shop:pay:v1'))).toHaveLength(3);
    expect(() => admin.listRecords('shop')).toThrow(OncelyConfigurationError);
  });

  it('inspects, lists and evicts SingleFlight state, never a running lease', async () => {
    const clock = new ManualClock();
    const coordinator = new InMemoryFlightCoordinator({ clock, sweepInterval: 0 });
    const admin = new OncelyAdmin(new InMemoryIdempotencyRecordStore({ clock }), { coordinator });
    const [running, cached, failed] = ['a', 'b', 'c'].map((k) => `shop:report:v1:t:${k}:f`);
    const lead = await coordinator.acquire(running!, 'owner-1', 5_000);
    await coordinator.acquire(cached!, 'owner-2', 5_000);
    await coordinator.complete(cached!, 'owner-2', {
      kind: 'result',
      payload: '{"x":1}',
      ttlMs: 9_000,
    });
    await coordinator.acquire(failed!, 'owner-3', 5_000);
    await coordinator.complete(failed!, 'owner-3', { kind: 'error', payload: '{}', ttlMs: 4_000 });

    expect(admin.inspectsFlights).toBe(true);
    expect(await admin.inspectFlight(running!)).toEqual({
      kind: 'leading',
      holder: 'owner-1',
      fence: lead.kind === 'leader' ? lead.fence : -1,
      leaseRemainingMs: 5_000,
    });
    expect(await admin.inspectFlight(cached!)).toEqual({
      kind: 'cached',
      remainingMs: 9_000,
      bytes: 7,
    });
    expect(await admin.inspectFlight(failed!)).toEqual({ kind: 'failed', remainingMs: 4_000 });
    expect((await collect(admin.listFlights('shop:report'))).map((f) => f.key).sort()).toEqual([
      running,
      cached,
      failed,
    ]);

    expect(await admin.purge('shop:report:v1')).toEqual({ records: 0, flights: 2 });
    expect((await admin.inspectFlight(running!)).kind).toBe('leading');
    expect((await admin.inspectFlight(cached!)).kind).toBe('absent');
  });

  it('purges a key, an identity or an operation whatever its state: the next request runs', async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const admin = new OncelyAdmin(store, { coordinator: 'none' });
    const held = await store.begin('shop:pay:v1:t:held', digest, options);
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const done = await store.begin('shop:pay:v1:t:done', digest, options);
    if (done.kind !== 'acquired') throw new Error(done.kind);
    await store.complete(done.lease, ok);

    expect(await admin.purge('shop:pay:v1:t:done:0123abcd')).toEqual({ records: 1, flights: 0 });
    expect((await store.begin('shop:pay:v1:t:done', digest, options)).kind).toBe('acquired');
    expect(await admin.purge('shop:pay:v1:t:done')).toEqual({ records: 1, flights: 0 });
    expect(await admin.purge('shop:pay:v1:t:done')).toEqual({ records: 0, flights: 0 });

    expect(await admin.purge('shop:pay')).toEqual({ records: 1, flights: 0 });
    await expect(store.complete(held.lease, ok)).rejects.toThrow(LeaseLostError);
    expect((await store.begin('shop:pay:v1:t:held', digest, options)).kind).toBe('acquired');
  });
});
