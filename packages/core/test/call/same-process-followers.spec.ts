import { jest } from '@jest/globals';
import {
  FlightBusyError,
  IdempotencyConflictError,
  ProblemType,
  toProblemResponse,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
  type ProtectedCallResult,
  type ProtectedRoute,
} from '@oncely/core/adapter';
import { answered, backends, gate, type ProtectionBackend } from './protection-nodes.js';

jest.setTimeout(30_000);

const defaults = { ...DEFAULT_PROTECTION, namespace: 'followers' };

const request = (key: string) => ({
  body: { sku: 'a' },
  params: { id: key },
  headers: { 'idempotency-key': key },
  user: { tenant: 't-1' },
});

const created = (value: unknown, status = 201): HttpResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value },
});

/** Both mechanisms with followers that wait: what issue 14 item 4 is about. */
const routes: ReadonlyArray<[string, (wait: number) => ProtectedRoute]> = [
  [
    "an idempotent route with onBusy: 'wait'",
    (wait) =>
      defineProtectedRoute(
        'Orders.create',
        { idempotent: { operation: 'order', scope: 'user.tenant', onBusy: 'wait', wait } },
        defaults,
      ),
  ],
  [
    'a @SingleFlight route',
    (wait) =>
      defineProtectedRoute(
        'Reports.get',
        {
          singleFlight: { operation: 'report', target: 'params.id', input: [], wait, resultTtl: 0 },
        },
        defaults,
      ),
  ],
];

describe.each(backends)('Same-process followers, %s', (_, backendOf) => {
  let backend: ProtectionBackend;
  beforeEach(async () => {
    backend = await backendOf();
  });
  afterEach(() => backend.close());

  describe.each(routes)('on %s', (_, routeWith) => {
    it('answer 409 with Retry-After once their own wait is over while the leader hangs', async () => {
      const { executor } = backend.node();
      const route = routeWith(300);
      const key = `hung-${Math.random()}`;
      const held = gate();
      let runs = 0;
      const call = () =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request(key)),
          handler: async () => {
            runs += 1;
            held.signal();
            await held.opened;
            return created({ run: runs });
          },
        });
      const leader = call();
      await held.entered;
      const follower = await answered(
        call().then(
          () => undefined,
          (error: unknown) => error,
        ),
        'the same-process follower of a hung leader',
      );
      expect(
        follower instanceof IdempotencyConflictError || follower instanceof FlightBusyError,
      ).toBe(true);
      const problem = toProblemResponse(follower);
      expect(problem?.status).toBe(409);
      expect(problem?.body.type).toBe(ProblemType.requestInFlight);
      expect(Number(problem?.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      held.open();
      expect(await leader).toEqual({ replayed: false, response: created({ run: 1 }) });
      expect(runs).toBe(1);
    });

    it.each([
      ['answers 503', async () => created({ down: true }, 503)],
      [
        'throws',
        async (): Promise<HttpResponse> => {
          throw new Error('upstream reset');
        },
      ],
    ])(
      'let exactly one waiter run again when the leader %s, and share its success with the others',
      async (_, failure) => {
        const { executor } = backend.node();
        const route = routeWith(10_000);
        const key = `transient-${Math.random()}`;
        const held = gate();
        let runs = 0;
        const call = () =>
          executor.execute({
            route,
            keys: resolveCallKeys(route, request(key)),
            handler: async () => {
              runs += 1;
              if (runs > 1) return created({ run: runs });
              held.signal();
              await held.opened;
              return failure();
            },
          });
        const leader = call().then(
          (result) => result,
          (error: unknown) => error,
        );
        await held.entered;
        const waiters = Array.from({ length: 5 }, () => call());
        held.open();
        const own = await leader;
        const shared = await answered(Promise.all(waiters), 'the waiters of a failed leader');

        if (own instanceof Error) expect(own.message).toBe('upstream reset');
        else expect((own as ProtectedCallResult).response.status).toBe(503);
        expect(runs).toBe(2);
        expect(shared.map((result) => result.response.status)).toEqual(Array(5).fill(201));
        expect(shared.map((result) => result.response.body)).toEqual(
          Array(5).fill({ kind: 'json', value: { run: 2 } }),
        );
        expect(shared.filter((result) => !result.replayed)).toHaveLength(1);
        expect(shared.filter((result) => result.replayed)).toHaveLength(4);
      },
    );
  });
});
