import { jest } from '@jest/globals';
import {
  LeaseLostError,
  MaxDurationExceededError,
  OncelyConfigurationError,
  ProblemType,
  RouteOptionsError,
  SingleFlight,
  toProblemResponse,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  checkRouteOptions,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import { resolveProtectionDefaults } from '../../src/engine/protection-setup.js';
import {
  answered,
  backends,
  eventually,
  gate,
  type ProtectionBackend,
} from './protection-nodes.js';

jest.setTimeout(60_000);

const defaults = { ...DEFAULT_PROTECTION, namespace: 'expiry' };

const request = (key: string) => ({
  body: { sku: 'a' },
  params: { id: key },
  headers: { 'idempotency-key': key },
  user: { tenant: 't-1' },
});

const created = (value: unknown): HttpResponse => ({
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value },
});

const routes: ReadonlyArray<[string, (maxDuration: number) => ProtectedRoute]> = [
  [
    "an idempotent route with onBusy: 'wait'",
    (maxDuration) =>
      defineProtectedRoute(
        'Orders.create',
        {
          idempotent: {
            operation: 'order',
            scope: 'user.tenant',
            onBusy: 'wait',
            wait: 10_000,
            maxDuration,
          },
        },
        defaults,
      ),
  ],
  [
    'a @SingleFlight route',
    (maxDuration) =>
      defineProtectedRoute(
        'Reports.get',
        {
          singleFlight: {
            operation: 'report',
            target: 'params.id',
            input: [],
            wait: 10_000,
            resultTtl: 60_000,
            maxDuration,
          },
        },
        defaults,
      ),
  ],
];

const failureOf = (pending: Promise<unknown>) =>
  pending.then(
    (result) => result,
    (error: unknown) => error,
  );

function expectLeaseLostProblem(error: unknown) {
  expect(error).toBeInstanceOf(MaxDurationExceededError);
  expect(error).toBeInstanceOf(LeaseLostError);
  const problem = toProblemResponse(error);
  expect(problem?.status).toBe(503);
  expect(problem?.body.type).toBe(ProblemType.leaseLost);
  expect(problem?.headers['retry-after']).toBe('1');
  expect(problem?.body.maxDurationMs).toBe(300);
}

describe('maxDuration: validated where it is declared', () => {
  it.each([0, -1, 1.5, '300', Number.POSITIVE_INFINITY, 2 ** 31])(
    'refuses maxDuration %p on both decorators, naming the option',
    (maxDuration) => {
      const declared = { operation: 'o', target: 'params.id', idempotencyKey: 'ignored' } as const;
      const { idempotencyKey: _, ...flight } = declared;
      const checks = [
        () =>
          checkRouteOptions('Orders.create', 'idempotent', { ...declared, maxDuration } as never),
        () => checkRouteOptions('Reports.get', 'singleFlight', { ...flight, maxDuration } as never),
      ];
      for (const check of checks) {
        expect(check).toThrow(RouteOptionsError);
        expect(check).toThrow('Invalid oncely option "maxDuration"');
        expect(check).toThrow('must be a whole number of milliseconds from 1 to 2147483647');
      }
    },
  );

  it('refuses a bad module default, naming it, and defaults to 300 000 ms', () => {
    expect(() =>
      resolveProtectionDefaults('OncelyModule', { namespace: 'x', defaults: { maxDuration: 0 } }),
    ).toThrow(OncelyConfigurationError);
    expect(() =>
      resolveProtectionDefaults('OncelyModule', { namespace: 'x', defaults: { maxDuration: 0 } }),
    ).toThrow(/defaults\.maxDuration/);
    expect(resolveProtectionDefaults('createOncely()', { namespace: 'x' }).maxDuration).toBe(
      300_000,
    );
    const route = defineProtectedRoute(
      'Reports.get',
      { singleFlight: { operation: 'r', target: 'params.id' } },
      resolveProtectionDefaults('OncelyModule', {
        namespace: 'x',
        defaults: { maxDuration: 5_000 },
      }),
    );
    expect(route.singleFlight?.maxDuration).toBe(5_000);
  });
});

describe.each(backends)('maxDuration, %s', (_, backendOf) => {
  let backend: ProtectionBackend;
  beforeEach(async () => {
    backend = await backendOf();
  });
  afterEach(() => backend.close());

  it("ends a route's SingleFlight with its record's maxDuration when both decorators are on it", async () => {
    const { executor, engines } = backend.node();
    const route = defineProtectedRoute(
      'Orders.export',
      {
        idempotent: { operation: 'export', scope: 'user.tenant', maxDuration: 300 },
        singleFlight: { operation: 'export-run', target: 'params.id', input: [] },
      },
      defaults,
    );
    const signals: AbortSignal[] = [];
    const expired = await answered(
      failureOf(
        executor.execute({
          route,
          keys: resolveCallKeys(route, request(`both-${Math.random()}`)),
          handler: ({ signal }) => {
            signals.push(signal);
            return new Promise<HttpResponse>(() => undefined);
          },
        }),
      ),
      'a call past maxDuration on a route with both decorators',
    );
    expectLeaseLostProblem(expired);
    expect(signals[0]?.aborted).toBe(true);
    const flights = engines.flight as SingleFlight;
    await eventually(
      async () => flights.inFlight === 0 && (await backend.leftovers()) === 0,
      'the flight and the leases to go',
    );
    expect(executor.inFlight).toBe(0);
  });

  describe.each(routes)('on %s', (_, routeWith) => {
    it('answers the caller and every waiter 503 lease-lost, runs the retry, and keeps nothing of the late handler', async () => {
      const nodeA = backend.node();
      const nodeB = backend.node();
      const route = routeWith(300);
      const key = `hung-${Math.random()}`;
      const first = gate();
      const signals: AbortSignal[] = [];
      let runs = 0;
      let lateFinished!: () => void;
      const late = new Promise<void>((resolve) => (lateFinished = resolve));
      const call = (executor = nodeA.executor) =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request(key)),
          handler: async ({ signal }) => {
            const run = ++runs;
            signals.push(signal);
            if (run === 1) {
              first.signal();
              await first.opened;
              lateFinished();
            }
            return created({ run });
          },
        });
      const leader = failureOf(call());
      await first.entered;
      const sameProcess = failureOf(call());
      const otherNode = failureOf(call(nodeB.executor));

      const [own, joined, remote] = await answered(
        Promise.all([leader, sameProcess, otherNode]),
        'the calls of a handler past maxDuration',
      );
      for (const error of [own, joined, remote]) expectLeaseLostProblem(error);
      expect(runs).toBe(1);
      expect(signals[0]?.aborted).toBe(true);
      expect(signals[0]?.reason).toBeInstanceOf(MaxDurationExceededError);

      const retried = await answered(call(), 'the retry after maxDuration');
      expect(retried).toEqual({ replayed: false, response: created({ run: 2 }) });
      expect(runs).toBe(2);

      first.open();
      await late;
      const replay = await call(nodeB.executor);
      expect(replay.replayed).toBe(true);
      expect(replay.response.body).toEqual({ kind: 'json', value: { run: 2 } });
      expect(runs).toBe(2);
    });
  });
});
