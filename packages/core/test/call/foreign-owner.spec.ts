import {
  ForeignOwnerError,
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  type OncelyEvent,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
  type ProtectedCallResult,
  type ProtectedRoute,
} from '@oncely/core/adapter';

/** The in-memory store posing as a SQL one, so the executor puts the guard flight in front. */
class GuardedRecordStore extends InMemoryIdempotencyRecordStore {
  override readonly answersAtCacheSpeed = false;
}

const defaults = { ...DEFAULT_PROTECTION, namespace: 'shop' };

/** Two services with one namespace, on one coordinator and one store. */
function twoServices(store: InMemoryIdempotencyRecordStore) {
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  const service = (name: string) => {
    const events: OncelyEvent[] = [];
    const executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator,
        store,
        service: name,
        events: [(event) => events.push(event)],
      }),
    );
    return { executor, events };
  };
  return { orders: service('orders-api'), billing: service('billing-api'), coordinator };
}

function route(mechanism: 'idempotent' | 'singleFlight', shared = false): ProtectedRoute {
  const declaration =
    mechanism === 'idempotent'
      ? { idempotent: { operation: 'payment', scope: 'user.tenant', shared } }
      : { singleFlight: { operation: 'quote', target: 'params.id', input: [], shared } };
  return defineProtectedRoute('Payments.create', declaration, defaults);
}

const request = (body: object = { amount: '10.00' }, id = 'q-1') => ({
  body,
  params: { id },
  headers: { 'idempotency-key': 'k-1' },
  user: { tenant: 't-1' },
});

const json = (value: unknown): HttpResponse => ({
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value },
});

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let signal!: () => void;
  const entered = new Promise<void>((resolve) => (signal = resolve));
  return { opened, open, entered, signal };
}

const foreign = { owner: 'billing-api', foreignOwner: 'orders-api' };

describe.each([
  ['behind the guard flight', GuardedRecordStore],
  ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
])('records of another service, %s', (_, Store) => {
  let coordinator: InMemoryFlightCoordinator | undefined;
  afterEach(() => coordinator?.close());

  function call(
    executor: ProtectedCallExecutor,
    protectedRoute: ProtectedRoute,
    handler: () => Promise<HttpResponse>,
    body?: object,
  ): Promise<ProtectedCallResult> {
    return executor.execute({
      route: protectedRoute,
      keys: resolveCallKeys(protectedRoute, request(body)),
      handler,
    });
  }

  it('are neither replayed nor overwritten: every call is refused, reported once, and runs nothing', async () => {
    const services = twoServices(new Store());
    coordinator = services.coordinator;
    const { orders, billing } = services;
    const payments = route('idempotent');
    let runs = 0;
    const first = await call(orders.executor, payments, async () => json({ run: ++runs }));

    const refused = await Promise.allSettled([
      ...Array.from({ length: 5 }, () =>
        call(billing.executor, payments, async () => json({ run: ++runs })),
      ),
      call(billing.executor, payments, async () => json({ run: ++runs }), { amount: '99.00' }),
    ]);

    expect(runs).toBe(1);
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as ForeignOwnerError;
      expect(error).toBeInstanceOf(ForeignOwnerError);
      expect(error).toMatchObject(foreign);
    }
    expect(billing.events.map((event) => [event.outcome, event.owner, event.foreignOwner])).toEqual(
      Array.from({ length: 6 }, () => ['foreign_owner', 'billing-api', 'orders-api']),
    );
    const replay = await call(orders.executor, payments, async () => json({ run: ++runs }));
    expect(replay.replayed).toBe(true);
    expect(replay.response.body).toEqual(first.response.body);
  });

  it('in flight, are refused too, and the first service completes its own', async () => {
    const services = twoServices(new Store());
    coordinator = services.coordinator;
    const { orders, billing } = services;
    const payments = route('idempotent');
    const held = gate();
    const first = call(orders.executor, payments, async () => {
      held.signal();
      await held.opened;
      return json({ by: 'orders' });
    });
    await held.entered;

    await expect(
      call(billing.executor, payments, async () => json({ by: 'billing' })),
    ).rejects.toMatchObject(foreign);
    expect(billing.events.map((event) => event.outcome)).toEqual(['foreign_owner']);

    held.open();
    expect((await first).response.body).toEqual({ kind: 'json', value: { by: 'orders' } });
  });

  it('of a route both declare shared are replayed', async () => {
    const services = twoServices(new Store());
    coordinator = services.coordinator;
    const { orders, billing } = services;
    const payments = route('idempotent', true);
    await call(orders.executor, payments, async () => json({ by: 'orders' }));

    const replay = await call(billing.executor, payments, async () => json({ by: 'billing' }));

    expect(replay.replayed).toBe(true);
    expect(replay.response.body).toEqual({ kind: 'json', value: { by: 'orders' } });
    expect(billing.events.map((event) => event.outcome)).toEqual(['replayed']);
  });
});

describe('SingleFlight leases of another service', () => {
  it('are refused instead of waited for, unless the route is shared', async () => {
    const { orders, billing, coordinator } = twoServices(new InMemoryIdempotencyRecordStore());
    try {
      for (const shared of [false, true]) {
        const quotes = route('singleFlight', shared);
        const id = shared ? 'q-shared' : 'q-own';
        const held = gate();
        const first = orders.executor.execute({
          route: quotes,
          keys: resolveCallKeys(quotes, request(undefined, id)),
          handler: async () => {
            held.signal();
            await held.opened;
            return json({ by: 'orders' });
          },
        });
        await held.entered;
        const second = billing.executor.execute({
          route: quotes,
          keys: resolveCallKeys(quotes, request(undefined, id)),
          handler: async () => json({ by: 'billing' }),
        });
        if (!shared) {
          await expect(second).rejects.toMatchObject(foreign);
          held.open();
          await first;
          continue;
        }
        held.open();
        const [led, joined] = await Promise.all([first, second]);
        expect(joined.response.body).toEqual(led.response.body);
      }
      expect(
        billing.events.map((event) => [
          event.mechanism,
          event.outcome,
          event.owner,
          event.foreignOwner,
        ]),
      ).toEqual([
        ['single-flight', 'foreign_owner', 'billing-api', 'orders-api'],
        ['single-flight', 'shared', undefined, undefined],
      ]);
    } finally {
      await coordinator.close();
    }
  });

  it('cached results are not answered to another service, unless the route is shared', async () => {
    const { orders, billing, coordinator } = twoServices(new InMemoryIdempotencyRecordStore());
    try {
      const answers: unknown[] = [];
      for (const shared of [false, true]) {
        const quotes = route('singleFlight', shared);
        const id = shared ? 'q-cached-shared' : 'q-cached-own';
        const quote = (executor: ProtectedCallExecutor, by: string) =>
          executor.execute({
            route: quotes,
            keys: resolveCallKeys(quotes, request(undefined, id)),
            handler: async () => json({ by }),
          });
        await quote(orders.executor, 'orders');
        answers.push(
          await quote(billing.executor, 'billing').then(
            (result) => result.response.body,
            (error: unknown) => error,
          ),
        );
      }

      expect(answers[0]).toBeInstanceOf(ForeignOwnerError);
      expect(answers[0]).toMatchObject(foreign);
      expect(answers[1]).toEqual({ kind: 'json', value: { by: 'orders' } });
      expect(
        billing.events.map((event) => [event.outcome, event.owner, event.foreignOwner]),
      ).toEqual([
        ['cached', undefined, undefined],
        ['foreign_owner', 'billing-api', 'orders-api'],
        ['cached', undefined, undefined],
      ]);
    } finally {
      await coordinator.close();
    }
  });
});
