import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  LeaseLostError,
  type OncelyEvent,
  type RecordLease,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
} from '@oncely/core/adapter';

/** A store whose renewals fail, as one that has become unreachable mid-call. */
class UnreachableOnRenewStore extends InMemoryIdempotencyRecordStore {
  renewals = 0;

  override async renew(_lease: RecordLease, _leaseTtlMs: number): Promise<boolean> {
    this.renewals += 1;
    throw new Error('store unreachable');
  }
}

describe('ProtectedCallExecutor: the record lease', () => {
  it('aborts the handler once failing renewals let the record lease run out, and confirms nothing', async () => {
    const store = new UnreachableOnRenewStore();
    const events: OncelyEvent[] = [];
    const executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator: new InMemoryFlightCoordinator({ sweepInterval: 0 }),
        store,
        events: [(e) => events.push(e)],
      }),
    );
    const route = defineProtectedRoute(
      'Orders.create',
      {
        idempotent: {
          operation: 'order',
          target: 'body.id',
          idempotencyKey: 'ignored',
          leaseTtl: 150,
        },
      },
      { ...DEFAULT_PROTECTION, namespace: 'lease' },
    );
    let aborted: unknown;
    const outcome = executor.execute({
      route,
      keys: resolveCallKeys(route, { body: { id: 'o-1' } }),
      handler: ({ signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            const reason: Error = signal.reason;
            aborted = reason;
            reject(reason);
          });
        }),
    });

    await expect(outcome).rejects.toBeInstanceOf(LeaseLostError);
    expect(aborted).toBeInstanceOf(LeaseLostError);
    expect(store.renewals).toBeGreaterThanOrEqual(2);
    expect(events.map((e) => `${e.mechanism}:${e.outcome}`)).toEqual(['idempotency:lease_lost']);
  });
});
