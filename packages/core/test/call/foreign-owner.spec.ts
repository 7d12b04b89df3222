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

/** A service's executor on `coordinator` and `store`, and the events it emitted. */
function serviceOn(
  coordinator: InMemoryFlightCoordinator,
  store: InMemoryIdempotencyRecordStore,
  name: string,
  serviceAliases?: readonly string[],
) {
  const events: OncelyEvent[] = [];
  const executor = new ProtectedCallExecutor(
    createProtectionEngines({
      coordinator,
      store,
      service: name,
      ...(serviceAliases && { serviceAliases: new Set(serviceAliases) }),
      events: [(event) => events.push(event)],
    }),
  );
  return { executor, events };
}

/** Two services with one namespace, on one coordinator and one store. */
function twoServices(store: InMemoryIdempotencyRecordStore) {
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  const service = (name: string) => serviceOn(coordinator, store, name);
  return { orders: service('orders-api'), billing: service('billing-api'), coordinator };
}

/**
 * A service renamed from `shop` to `shop-api` on one coordinator and one store: step 1 runs the
 * old name accepting the new, step 2 the new name accepting the old, beside an unrelated service.
 */
function renamedService(store: InMemoryIdempotencyRecordStore) {
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
  return {
    coordinator,
    step1: serviceOn(coordinator, store, 'shop', ['shop-api']),
    step2: serviceOn(coordinator, store, 'shop-api', ['shop']),
    unrelated: serviceOn(coordinator, store, 'billing-api'),
  };
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
        ['foreign_owner', 'billing-api', 'orders-api'],
        ['cached', undefined, undefined],
      ]);
    } finally {
      await coordinator.close();
    }
  });
});

const notFound = (service: string): HttpResponse => ({
  status: 404,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { detail: `report q-1 of ${service} not found` } },
});

/** A value handler's failure carrying an HTTP status, as Nest's `NotFoundException` does. */
class NotFound extends Error {
  readonly status = 404;
}

describe('SingleFlight errors a service keeps (errorTtl)', () => {
  const quote = (
    executor: ProtectedCallExecutor,
    quotes: ProtectedRoute,
    handler: () => Promise<HttpResponse>,
  ) =>
    executor.execute({ route: quotes, keys: resolveCallKeys(quotes, request()), handler }).then(
      (result) => result.response,
      (error: unknown) => error,
    );

  it('are refused to another service, whose handler never runs, and still answered to their own', async () => {
    const { orders, billing, coordinator } = twoServices(new InMemoryIdempotencyRecordStore());
    try {
      const quotes = route('singleFlight');
      const runs = { orders: 0, billing: 0 };
      const kept = await quote(orders.executor, quotes, async () => {
        runs.orders += 1;
        return notFound('orders-api');
      });

      const refused = await quote(billing.executor, quotes, async () => {
        runs.billing += 1;
        return notFound('billing-api');
      });
      const again = await quote(orders.executor, quotes, async () => {
        runs.orders += 1;
        return notFound('orders-api');
      });

      expect(kept).toMatchObject({ status: 404 });
      expect(refused).toBeInstanceOf(ForeignOwnerError);
      expect(refused).toMatchObject(foreign);
      expect(runs).toEqual({ orders: 1, billing: 0 });
      expect(again).toEqual({
        status: 404,
        headers: { 'content-type': 'application/json', 'idempotent-replayed': 'true' },
        body: { kind: 'json', value: { detail: 'report q-1 of orders-api not found' } },
      });
      expect(
        billing.events.map((event) => [event.outcome, event.owner, event.foreignOwner]),
      ).toEqual([['foreign_owner', 'billing-api', 'orders-api']]);
      expect(orders.events.map((event) => event.outcome)).toEqual(['failed', 'failed']);
    } finally {
      await coordinator.close();
    }
  });

  it('are answered to another service on a route both declare shared', async () => {
    const { orders, billing, coordinator } = twoServices(new InMemoryIdempotencyRecordStore());
    try {
      const quotes = route('singleFlight', true);
      let billingRuns = 0;
      await quote(orders.executor, quotes, async () => notFound('orders-api'));

      const shared = await quote(billing.executor, quotes, async () => {
        billingRuns += 1;
        return notFound('billing-api');
      });

      expect(billingRuns).toBe(0);
      expect(shared).toMatchObject({
        status: 404,
        body: { kind: 'json', value: { detail: 'report q-1 of orders-api not found' } },
      });
    } finally {
      await coordinator.close();
    }
  });

  it('thrown by a value handler are refused to another service too', async () => {
    const { orders, billing, coordinator } = twoServices(new InMemoryIdempotencyRecordStore());
    try {
      const quotes = route('singleFlight');
      const runs = { orders: 0, billing: 0 };
      const value = (executor: ProtectedCallExecutor, name: keyof typeof runs) =>
        executor
          .executeValue({
            route: quotes,
            keyContext: request(),
            run: async () => {
              runs[name] += 1;
              throw new NotFound(`report q-1 of ${name} not found`);
            },
          })
          .catch((error: unknown) => error);

      const kept = await value(orders.executor, 'orders');
      const refused = await value(billing.executor, 'billing');
      const again = await value(orders.executor, 'orders');

      expect(kept).toBeInstanceOf(NotFound);
      expect(refused).toBeInstanceOf(ForeignOwnerError);
      expect(refused).toMatchObject(foreign);
      expect(again).toMatchObject({ status: 404, message: 'report q-1 of orders not found' });
      expect(runs).toEqual({ orders: 1, billing: 0 });
    } finally {
      await coordinator.close();
    }
  });
});

describe.each([
  ['behind the guard flight', GuardedRecordStore],
  ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
])('a service being renamed (serviceAliases), %s', (_, Store) => {
  let coordinator: InMemoryFlightCoordinator | undefined;
  afterEach(() => coordinator?.close());

  const call = (
    executor: ProtectedCallExecutor,
    protectedRoute: ProtectedRoute,
    handler: () => Promise<HttpResponse>,
    id = 'q-1',
  ): Promise<ProtectedCallResult> =>
    executor.execute({
      route: protectedRoute,
      keys: resolveCallKeys(protectedRoute, {
        ...request(undefined, id),
        headers: { 'idempotency-key': id },
      }),
      handler,
    });

  it('replays the records of the other name as its own, both ways, running the handler once; an unrelated service is still refused', async () => {
    const services = renamedService(new Store());
    coordinator = services.coordinator;
    const { step1, step2, unrelated } = services;
    const payments = route('idempotent');
    let runs = 0;
    const handler = async () => json({ run: ++runs });

    const first = await call(step1.executor, payments, handler, 'by-old');
    const second = await call(step2.executor, payments, handler, 'by-new');
    const replays = [
      await call(step2.executor, payments, handler, 'by-old'),
      await call(step1.executor, payments, handler, 'by-new'),
    ];

    expect(runs).toBe(2);
    expect(replays.map((replay) => [replay.replayed, replay.response.body])).toEqual([
      [true, first.response.body],
      [true, second.response.body],
    ]);
    await expect(call(unrelated.executor, payments, handler, 'by-old')).rejects.toMatchObject({
      owner: 'billing-api',
      foreignOwner: 'shop',
    });
    await expect(call(unrelated.executor, payments, handler, 'by-new')).rejects.toMatchObject({
      owner: 'billing-api',
      foreignOwner: 'shop-api',
    });
    expect(runs).toBe(2);
    for (const { events } of [step1, step2]) {
      expect(events.filter((event) => event.outcome === 'foreign_owner')).toEqual([]);
    }
  });

  it('waits for a SingleFlight lease of the other name and takes its cached result, both ways; an unrelated service is still refused', async () => {
    const services = renamedService(new Store());
    coordinator = services.coordinator;
    const { step1, step2, unrelated } = services;
    const quotes = route('singleFlight');
    let runs = 0;
    const held = gate();
    const led = call(step1.executor, quotes, async () => {
      held.signal();
      await held.opened;
      return json({ run: ++runs });
    });
    await held.entered;
    const joined = call(step2.executor, quotes, async () => json({ run: ++runs }));
    await expect(
      call(unrelated.executor, quotes, async () => json({ run: ++runs })),
    ).rejects.toMatchObject({ owner: 'billing-api', foreignOwner: 'shop' });
    held.open();

    const answers = await Promise.all([led, joined]);
    const cached = [
      await call(step2.executor, quotes, async () => json({ run: ++runs })),
      await call(step1.executor, quotes, async () => json({ run: ++runs }), 'q-2'),
      await call(step2.executor, quotes, async () => json({ run: ++runs }), 'q-2'),
    ];

    expect(runs).toBe(2);
    expect(answers.map((answer) => answer.response.body)).toEqual([
      { kind: 'json', value: { run: 1 } },
      { kind: 'json', value: { run: 1 } },
    ]);
    expect(cached.map((answer) => answer.response.body)).toEqual([
      { kind: 'json', value: { run: 1 } },
      { kind: 'json', value: { run: 2 } },
      { kind: 'json', value: { run: 2 } },
    ]);
    await expect(
      call(unrelated.executor, quotes, async () => json({ run: ++runs }), 'q-2'),
    ).rejects.toMatchObject({ owner: 'billing-api', foreignOwner: 'shop' });
    expect(step2.events.map((event) => event.outcome)).toEqual(['shared', 'cached', 'cached']);
    expect(step1.events.map((event) => event.outcome)).toEqual(['executed', 'executed']);
  });

  it('takes a SingleFlight error kept by the other name as its own, both ways; an unrelated service is still refused', async () => {
    const services = renamedService(new Store());
    coordinator = services.coordinator;
    const { step1, step2, unrelated } = services;
    const quotes = route('singleFlight');
    let runs = 0;
    const handler = async () => {
      runs += 1;
      return notFound('shop');
    };

    const answers = [
      await call(step1.executor, quotes, handler),
      await call(step2.executor, quotes, handler),
      await call(step2.executor, quotes, handler, 'q-2'),
      await call(step1.executor, quotes, handler, 'q-2'),
    ];

    expect(runs).toBe(2);
    expect(answers.map((answer) => [answer.response.status, answer.replayed])).toEqual([
      [404, false],
      [404, true],
      [404, false],
      [404, true],
    ]);
    await expect(call(unrelated.executor, quotes, handler)).rejects.toMatchObject({
      owner: 'billing-api',
      foreignOwner: 'shop',
    });
    await expect(call(unrelated.executor, quotes, handler, 'q-2')).rejects.toMatchObject({
      owner: 'billing-api',
      foreignOwner: 'shop-api',
    });
    expect(runs).toBe(2);
  });
});
