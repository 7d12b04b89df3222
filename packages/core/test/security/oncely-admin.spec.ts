import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  LeaseLostError,
  OncelyAdmin,
  OncelyConfigurationError,
  type FlightCoordinator,
  type IdempotencyRecordStore,
} from '@oncely/core';
import { ManualClock } from '../flight/manual-clock.js';

const identity = 'shop:pay:v1:t-1:order-9';
const digest = 'c'.repeat(64);
const options = { leaseTtlMs: 10_000, retentionMs: 60_000 };
const ok = {
  status: 200,
  headers: { 'x-a': '1' },
  body: { kind: 'json' as const, value: { ok: 1 } },
};

describe('OncelyAdmin on the in-memory store', () => {
  it('inspects absent, in-progress and completed records, by identity or by whole key', async () => {
    const clock = new ManualClock();
    const store = new InMemoryIdempotencyRecordStore({ clock });
    const admin = new OncelyAdmin(store, { coordinator: 'none' });
    expect((await admin.inspect(identity)).kind).toBe('absent');
    const begun = await store.begin(identity, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    expect(await admin.inspect(`${identity}:0123456789abcdef`)).toEqual({
      kind: 'in_progress',
      keyHash: begun.lease.keyHash,
      fingerprint: digest,
      fence: begun.lease.fence,
      leaseExpiresAt: begun.lease.leaseExpiresAt,
    });
    await store.complete(begun.lease, ok);
    const done = await admin.inspect(identity);
    expect(done).toMatchObject({ kind: 'completed', fence: 1, response: ok });
    expect(done.kind === 'completed' && done.expiresAt.getTime()).toBe(clock.now() + 60_000);
  });

  it('is refused without saying which coordinator it frees leases on, naming the option', () => {
    const store = new InMemoryIdempotencyRecordStore();
    for (const options of [undefined, {}, { coordinator: undefined }]) {
      expect(() => new OncelyAdmin(store, options as never)).toThrow(
        new OncelyConfigurationError(
          "OncelyAdmin needs the option \"coordinator\": the coordinator the app's engine uses (new OncelyAdmin(store, { coordinator })), so that forceRelease frees the leases on the key as well as its record; or coordinator: 'none' to release records only, knowing that a retry then meets the idempotency guard's 409 until the old handler ends.",
        ),
      );
    }
    expect(new OncelyAdmin(store, { coordinator: 'none' })).toBeInstanceOf(OncelyAdmin);
  });

  it('force-releases a stuck key: its holder cannot confirm, the next request runs', async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const admin = new OncelyAdmin(store, { coordinator: 'none' });
    const stuck = await store.begin(identity, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    expect(await admin.forceRelease(identity)).toEqual({ kind: 'released', fence: 1, leases: [] });
    await expect(store.complete(stuck.lease, ok)).rejects.toThrow(LeaseLostError);
    const next = await store.begin(identity, digest, options);
    expect(next.kind === 'acquired' && next.lease.fence).toBe(2);
    if (next.kind !== 'acquired') throw new Error(next.kind);
    await store.complete(next.lease, ok);
    expect(await admin.forceRelease(identity)).toEqual({ kind: 'completed', leases: [] });
    expect((await store.begin(identity, digest, options)).kind).toBe('replay');
    expect(await admin.forceRelease('shop:pay:v1:t-1:nothing')).toEqual({
      kind: 'absent',
      leases: [],
    });
  });

  it("with the coordinator, also frees the guard lease and the whole key's flight lease", async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
    const admin = new OncelyAdmin(store, { coordinator });
    const key = `${identity}:0123456789abcdef`;
    const stuck = await store.begin(identity, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    const guard = await coordinator.acquire(`${identity}:idem`, 'old-guard', 10_000);
    await coordinator.acquire(key, 'old-flight', 10_000);
    const woken = coordinator.waitForNotice(`${identity}:idem`, 60_000);

    expect(await admin.forceRelease(key)).toEqual({
      kind: 'released',
      fence: 1,
      leases: ['guard', 'flight'],
    });
    await woken;
    expect(await coordinator.renew(`${identity}:idem`, 'old-guard', 10_000)).toBe(false);
    expect(await coordinator.renew(key, 'old-flight', 10_000)).toBe(false);
    const next = await coordinator.acquire(`${identity}:idem`, 'new-guard', 10_000);
    expect(next.kind === 'leader' && guard.kind === 'leader' && next.fence > guard.fence).toBe(
      true,
    );
    expect(await admin.forceRelease(identity)).toEqual({
      kind: 'absent',
      leases: ['guard'],
    });
    await coordinator.close();
  });

  it('refuses a coordinator without the lease admin method', () => {
    const store = new InMemoryIdempotencyRecordStore();
    const wrapped = { acquire: jestFree } as unknown as FlightCoordinator;
    expect(() => new OncelyAdmin(store, { coordinator: wrapped })).toThrow(/forceReleaseLease/);
  });

  it('purges every expired record in batches', async () => {
    const clock = new ManualClock();
    const store = new InMemoryIdempotencyRecordStore({ clock });
    for (let i = 0; i < 25; i++) {
      const begun = await store.begin(`shop:pay:v1:t-1:k${i}`, digest, options);
      if (begun.kind === 'acquired' && i < 20) await store.complete(begun.lease, ok);
    }
    clock.advance(60_001);
    expect(await new OncelyAdmin(store, { coordinator: 'none' }).purgeExpired(7)).toBe(25);
    expect(store.size).toBe(0);
  });

  it('refuses a store without admin methods', () => {
    const bare = { begin: jestFree, complete: jestFree } as unknown as IdempotencyRecordStore;
    expect(() => new OncelyAdmin(bare, { coordinator: 'none' })).toThrow(OncelyConfigurationError);
  });
});

function jestFree(): never {
  throw new Error('not called');
}
