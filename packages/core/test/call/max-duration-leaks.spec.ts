import { jest } from '@jest/globals';
import { MaxDurationExceededError, SingleFlight } from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import { createHook } from 'node:async_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { answered, backends, eventually, type ProtectionBackend } from './protection-nodes.js';

jest.setTimeout(120_000);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const HUNG_KEYS = 1_000;
const MAX_DURATION = 3_000;
/** A lease TTL below maxDuration, so that the watchdogs renew while the handlers hang. */
const defaults = {
  ...DEFAULT_PROTECTION,
  namespace: 'leaks',
  leaseTtl: 2_000,
  maxDuration: MAX_DURATION,
};

const routes: ReadonlyArray<[string, ProtectedRoute]> = [
  [
    "an idempotent route with onBusy: 'wait'",
    defineProtectedRoute(
      'Orders.create',
      { idempotent: { operation: 'order', scope: 'user.tenant', onBusy: 'wait' } },
      defaults,
    ),
  ],
  [
    'an idempotent route refusing duplicates',
    defineProtectedRoute(
      'Orders.pay',
      { idempotent: { operation: 'pay', scope: 'user.tenant' } },
      defaults,
    ),
  ],
  [
    'a @SingleFlight route',
    defineProtectedRoute(
      'Reports.get',
      { singleFlight: { operation: 'report', target: 'params.id', input: [] } },
      defaults,
    ),
  ],
];

const request = (key: string) => ({
  body: { sku: 'a', padding: 'x'.repeat(2_000) },
  params: { id: key },
  headers: { 'idempotency-key': key },
  user: { tenant: 't-1' },
});

/** A handler that never settles and never reads its signal: the worst a route can do. */
const hung = (): Promise<HttpResponse> => new Promise<HttpResponse>(() => undefined);

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Timers oncely itself starts: the engines, stores and coordinators, not the test's. */
const OWN_SOURCE = /packages\/(core|redis)\/src\//;

describe.each(backends)('maxDuration over 1 000 hung keys, %s', (_, backendOf) => {
  let backend: ProtectionBackend;
  beforeEach(async () => {
    backend = await backendOf();
  });
  afterEach(() => backend.close());

  it.each(routes)('on %s leaves no lease, timer, map entry or heap behind', async (_, route) => {
    const { executor, engines } = backend.node();
    const runAll = async (label: string, count: number) => {
      const calls = Array.from({ length: count }, (_, i) =>
        executor
          .execute({
            route,
            keys: resolveCallKeys(route, request(`${label}-${i}`)),
            handler: hung,
          })
          .then(
            () => 'answered',
            (error: unknown) => (error instanceof MaxDurationExceededError ? 'expired' : error),
          ),
      );
      const outcomes = await answered(Promise.all(calls), `${count} hung calls`, 30_000);
      expect(outcomes).toEqual(Array(count).fill('expired'));
      await eventually(async () => (await backend.leftovers()) === 0, 'the leases to go');
    };
    // Warm up: loads every code path and opens every connection before the baseline.
    await runAll('warm-up', 10);
    const heapBefore = heapAfterGc();
    const oncelyTimers = new Map<number, string>();
    let started = 0;
    const timers = createHook({
      init(id, type) {
        if (type !== 'Timeout') return;
        const stack = new Error().stack ?? '';
        if (!OWN_SOURCE.test(stack)) return;
        started += 1;
        oncelyTimers.set(id, stack);
      },
      destroy(id) {
        oncelyTimers.delete(id);
      },
    }).enable();

    await runAll('hung', HUNG_KEYS);
    // Node reports a cleared timer's end on a later turn of the event loop, in batches; the
    // assertion below names whatever is still alive after that.
    await eventually(() => oncelyTimers.size === 0, "oncely's timers to end").catch(
      () => undefined,
    );
    timers.disable();

    expect(await backend.leftovers()).toBe(0);
    expect(executor.inFlight).toBe(0);
    expect((engines.flight as SingleFlight).inFlight).toBe(0);
    expect((engines.guard as SingleFlight).inFlight).toBe(0);
    // At least each call's maxDuration timer was seen, and every timer seen is gone.
    expect(started).toBeGreaterThanOrEqual(HUNG_KEYS);
    expect([...oncelyTimers.values()]).toEqual([]);
    const grown = heapAfterGc() - heapBefore;
    expect(grown).toBeLessThan(5 * 1024 * 1024);
  });
});
