import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  LeaseLostError,
  OncelyAdmin,
  type KeyReleaseOutcome,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  type CallKeys,
} from '@oncely/core/adapter';

/** The in-memory store posing as a SQL one, so the executor puts the guard flight in front. */
class GuardedRecordStore extends InMemoryIdempotencyRecordStore {
  override readonly answersAtCacheSpeed = false;
}

const defaults = { ...DEFAULT_PROTECTION, namespace: 'release' };
/** Short, so that the old handler's watchdog renews (and finds its lease gone) within 300 ms. */
const leaseTtl = 900;
/**
 * A duplicate that would be refused asks about the old handler's lease at once; one that waits
 * hears of it from the old handler's watchdog, at its next renewal.
 */
const WHEN = [
  ['reject', 'at once'],
  ['wait', "once the old handler's watchdog finds its lease gone"],
] as const;
const keyContext = { args: ['m-1'] };

/**
 * The first run of the route's handler blocks until released; while it does, the key is
 * force-released, and the next call of the same process must run at once while the blocked one
 * confirms nothing.
 */
async function forceReleaseWhileRunning(
  store: InMemoryIdempotencyRecordStore,
  declared: Parameters<typeof defineProtectedRoute>[1],
  keyOf: (keys: CallKeys) => string,
  released: KeyReleaseOutcome,
): Promise<void> {
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  const executor = new ProtectedCallExecutor(createProtectionEngines({ coordinator, store }));
  const admin = new OncelyAdmin(store, { coordinator });
  const route = defineProtectedRoute('Payments.capture', declared, defaults);
  let runs = 0;
  let unblock!: () => void;
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  let entered!: () => void;
  const running = new Promise<void>((resolve) => (entered = resolve));
  const call = () =>
    executor.executeValue({
      route,
      keyContext,
      run: async () => {
        const run = ++runs;
        if (run === 1) {
          entered();
          await blocked;
        }
        return { run };
      },
    });

  const stuck = call();
  await running;
  expect(await admin.forceRelease(keyOf(resolveCallKeys(route, keyContext)))).toEqual(released);

  expect(await call()).toEqual({ value: { run: 2 }, replayed: false });
  unblock();
  await expect(stuck).rejects.toThrow(LeaseLostError);
  await expect(stuck).rejects.toMatchObject({ reason: 'released' });
  expect(await call()).toEqual({ value: { run: 2 }, replayed: true });
  expect(runs).toBe(2);
  await coordinator.close();
}

describe.each([
  ['behind the guard flight', GuardedRecordStore],
  ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
])('a force-released key whose handler still runs in this process, %s', (_, Store) => {
  it.each(WHEN)(
    "onBusy '%s': the next call runs %s, the old one confirms nothing",
    async (onBusy) => {
      const store = new Store();
      const idempotent = {
        operation: 'capture',
        target: 'args.0',
        input: [],
        idempotencyKey: 'ignored' as const,
        onBusy,
        wait: 60_000,
        leaseTtl,
      };
      // Only routes that wait use the guard in front of a store answering at cache speed.
      const guarded = Store === GuardedRecordStore || onBusy === 'wait';
      await forceReleaseWhileRunning(store, { idempotent }, (keys) => keys.idempotency!.identity, {
        kind: 'released',
        fence: 1,
        leases: guarded ? ['guard'] : [],
      });
    },
  );
});

describe('a force-released @SingleFlight key whose handler still runs in this process', () => {
  it.each(WHEN)(
    "onBusy '%s': the next call leads %s, the old one confirms nothing",
    async (onBusy) => {
      const singleFlight = { operation: 'quote', target: 'args.0', input: [], onBusy, leaseTtl };
      await forceReleaseWhileRunning(
        new InMemoryIdempotencyRecordStore(),
        { singleFlight },
        (keys) => keys.singleFlight!.key,
        { kind: 'absent', leases: ['flight'] },
      );
    },
  );
});
