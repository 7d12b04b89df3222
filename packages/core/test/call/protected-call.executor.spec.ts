import { jest } from '@jest/globals';
import {
  FlightBusyError,
  IdempotencyConflictError,
  IdempotencyMismatchError,
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  LeaseLostError,
  ProblemType,
  REPLAYED_HEADER,
  TransactionalStoreRequiredError,
  type IdempotentRouteOptions,
  type OncelyEvent,
  type SingleFlightRouteOptions,
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

const defaults = { ...DEFAULT_PROTECTION, namespace: 'exec' };

class ManualClock {
  time = 1_000_000;
  now = () => this.time;
}

/** The in-memory store posing as a SQL one, so the executor puts the guard flight in front. */
class GuardedRecordStore extends InMemoryIdempotencyRecordStore {
  override readonly answersAtCacheSpeed = false;
}

function nodeOn(store = new InMemoryIdempotencyRecordStore(), clock?: ManualClock) {
  const events: OncelyEvent[] = [];
  const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0, ...(clock && { clock }) });
  const executor = new ProtectedCallExecutor(
    createProtectionEngines({
      coordinator,
      store,
      events: [(e) => events.push(e)],
      ...(clock && { clock }),
    }),
  );
  return { executor, events, store, coordinator };
}

function idempotentRoute(options: Partial<IdempotentRouteOptions> = {}): ProtectedRoute {
  return defineProtectedRoute(
    'Orders.create',
    { idempotent: { operation: 'order', scope: 'user.tenant', ...options } },
    defaults,
  );
}

function flightRoute(options: Partial<SingleFlightRouteOptions> = {}): ProtectedRoute {
  return defineProtectedRoute(
    'Reports.get',
    { singleFlight: { operation: 'report', target: 'params.id', input: [], ...options } },
    defaults,
  );
}

const request = (key: string, body: object = { sku: 'a' }, tenant = 't-1') => ({
  body,
  params: { id: 'r-1' },
  headers: { 'idempotency-key': key },
  user: { tenant },
});

const json = (
  value: unknown,
  status = 201,
  headers: Record<string, string> = {},
): HttpResponse => ({
  status,
  headers: { 'content-type': 'application/json', 'x-trace': 'leader-only', ...headers },
  body: { kind: 'json', value },
});

interface CallOutcome {
  readonly result?: ProtectedCallResult;
  readonly error?: unknown;
}

/**
 * Waits until `count` of `calls` are refused while the handler is still held, then lets it
 * finish; fails (rather than hangs) when they are not refused within 5 s of the handler starting.
 */
async function refusedWhileHeld(
  calls: Promise<ProtectedCallResult>[],
  held: ReturnType<typeof gate>,
  count: number,
): Promise<CallOutcome[]> {
  let refused = 0;
  const outcomes = calls.map((pending) =>
    pending.then(
      (result): CallOutcome => ({ result }),
      (error: unknown): CallOutcome => {
        refused += 1;
        return { error };
      },
    ),
  );
  await held.entered;
  const deadline = Date.now() + 5_000;
  while (refused < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(refused).toBe(count);
  held.open();
  return Promise.all(outcomes);
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let signal!: () => void;
  const entered = new Promise<void>((resolve) => (signal = resolve));
  return { opened, open, entered, signal };
}

describe.each([
  ['behind the guard flight', GuardedRecordStore],
  ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
])('ProtectedCallExecutor: idempotent routes, %s', (_, Store) => {
  const node = (store: InMemoryIdempotencyRecordStore = new Store(), clock?: ManualClock) =>
    nodeOn(store, clock);

  it('runs once, then replays the kept status, body and headers with idempotent-replayed', async () => {
    const { executor, events } = node();
    const route = idempotentRoute();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k-1')),
        handler: async () => json({ run: ++runs }, 201, { location: '/orders/1' }),
      });
    const first = await call();
    const second = await call();
    expect(first).toEqual({
      replayed: false,
      response: json({ run: 1 }, 201, { location: '/orders/1' }),
    });
    expect(second).toEqual({
      replayed: true,
      response: {
        status: 201,
        headers: {
          'content-type': 'application/json',
          location: '/orders/1',
          'idempotent-replayed': 'true',
        },
        body: { kind: 'json', value: { run: 1 } },
      },
    });
    expect(events.map((e) => `${e.mechanism}:${e.outcome}`)).toEqual([
      'idempotency:executed',
      'idempotency:replayed',
    ]);
  });

  it('refuses the same identity with another payload (422) and keeps the record', async () => {
    const { executor } = node();
    const route = idempotentRoute();
    const run = (body: object) =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k', body)),
        handler: async () => json(body),
      });
    await run({ sku: 'a' });
    await expect(run({ sku: 'b' })).rejects.toBeInstanceOf(IdempotencyMismatchError);
    expect((await run({ sku: 'a' })).replayed).toBe(true);
  });

  it("refuses a duplicate in flight (409), or waits and replays with onBusy: 'wait'", async () => {
    for (const onBusy of ['reject', 'wait'] as const) {
      const { executor } = node();
      const route = idempotentRoute({ onBusy });
      const held = gate();
      let runs = 0;
      const call = () =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request('k')),
          handler: async () => {
            runs += 1;
            held.signal();
            await held.opened;
            return json({ ok: true });
          },
        });
      const first = call();
      await held.entered;
      const duplicate = call();
      if (onBusy === 'reject') {
        await expect(duplicate).rejects.toBeInstanceOf(IdempotencyConflictError);
        held.open();
        expect((await first).replayed).toBe(false);
      } else {
        held.open();
        const [a, b] = await Promise.all([first, duplicate]);
        expect(a.replayed).toBe(false);
        expect(b.replayed).toBe(true);
        expect(b.response.body).toEqual(a.response.body);
      }
      expect(runs).toBe(1);
    }
  });

  it("replays a completed key to every concurrent duplicate, even with onBusy: 'reject'", async () => {
    const { executor } = node();
    const route = idempotentRoute({ onBusy: 'reject' });
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k-done')),
        handler: async () => json({ run: ++runs }),
      });
    await call();
    const settled = await Promise.allSettled(Array.from({ length: 30 }, call));
    expect(settled.filter((r) => r.status === 'rejected')).toHaveLength(0);
    const replays = settled.filter((r) => r.status === 'fulfilled' && r.value.replayed);
    expect(replays).toHaveLength(30);
    expect(runs).toBe(1);
  });

  it('asks the store once for concurrent duplicates of one process, but never shares across payloads', async () => {
    for (const holdsReplays of [true, false]) {
      const { executor, store } = node();
      // A store that holds no replay in this process (Redis with nearCache: false) is asked.
      if (!holdsReplays) Object.defineProperty(store, 'peekReplay', { value: undefined });
      const route = idempotentRoute({ onBusy: 'reject' });
      const call = (body: object) =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request('k-shared', body)),
          handler: async () => json(body),
        });
      await call({ sku: 'a' });
      const begin = jest.spyOn(store, 'begin');
      const settled = await Promise.allSettled([
        ...Array.from({ length: 30 }, () => call({ sku: 'a' })),
        call({ sku: 'b' }),
      ]);
      expect(settled.slice(0, 30).every((r) => r.status === 'fulfilled' && r.value.replayed)).toBe(
        true,
      );
      expect(settled[30]).toMatchObject({
        status: 'rejected',
        reason: expect.any(IdempotencyMismatchError),
      });
      // Behind the guard its result cache answers all; alone, the store's held replay answers
      // the 30 (or else one begin does), and one begin the other payload.
      expect(begin).toHaveBeenCalledTimes(Store === GuardedRecordStore ? 0 : holdsReplays ? 1 : 2);
    }
  });

  it("refuses, under onBusy: 'reject', duplicates that joined before the handler started, as it starts", async () => {
    const { executor } = node();
    const route = idempotentRoute({ onBusy: 'reject' });
    const held = gate();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k-joined')),
        handler: async () => {
          runs += 1;
          held.signal();
          await held.opened;
          return json({ ok: true });
        },
      });
    // All twenty start before the first one's record is even claimed.
    const outcomes = await refusedWhileHeld(Array.from({ length: 20 }, call), held, 19);

    expect(outcomes.filter((o) => o.error instanceof IdempotencyConflictError)).toHaveLength(19);
    expect(outcomes.filter((o) => o.result?.replayed === false)).toHaveLength(1);
    expect(runs).toBe(1);
  });

  it('does not keep 5xx, 409, 429 responses nor thrown errors: the retry runs again', async () => {
    const { executor } = node();
    const route = idempotentRoute();
    const outcomes: Array<() => HttpResponse> = [
      () => json({ e: 1 }, 503),
      () => json({ e: 2 }, 429),
      () => {
        throw new Error('boom');
      },
      () => json({ ok: true }, 200),
    ];
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => (outcomes[runs++] as () => HttpResponse)(),
      });
    expect((await call()).response.status).toBe(503);
    expect((await call()).response.status).toBe(429);
    await expect(call()).rejects.toThrow('boom');
    expect(await call()).toMatchObject({ replayed: false, response: { status: 200 } });
    expect(await call()).toMatchObject({ replayed: true, response: { status: 200 } });
    expect(runs).toBe(4);
  });

  it('keeps a deterministic 4xx the handler returned', async () => {
    const { executor } = node();
    const route = idempotentRoute();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => json({ runs: ++runs }, 404),
      });
    await call();
    expect(await call()).toMatchObject({
      replayed: true,
      response: { status: 404, body: { value: { runs: 1 } } },
    });
  });

  it("answers a bumped version from the previous version's records: replay, 409 in flight, 422", async () => {
    const store = new Store();
    const [v1, v2] = [node(store), node(store)];
    const before = idempotentRoute();
    const after = idempotentRoute({ version: 'v2', previousVersions: ['v1'] });
    const held = gate();
    let runs = 0;
    const call = (
      { executor }: typeof v1,
      route: ProtectedRoute,
      key: string,
      body: object = { sku: 'a' },
      hold = false,
    ) =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request(key, body)),
        handler: async () => {
          runs += 1;
          if (hold) {
            held.signal();
            await held.opened;
          }
          return json({ run: runs, version: route.idempotent?.operation });
        },
      });

    const done = await call(v1, before, 'k-done');
    const inFlight = call(v1, before, 'k-in-flight', { sku: 'a' }, true);
    await held.entered;

    const replay = await call(v2, after, 'k-done');
    expect(replay.replayed).toBe(true);
    expect(replay.response.body).toEqual(done.response.body);
    await expect(call(v2, after, 'k-done', { sku: 'b' })).rejects.toBeInstanceOf(
      IdempotencyMismatchError,
    );
    await expect(call(v2, after, 'k-in-flight')).rejects.toBeInstanceOf(IdempotencyConflictError);
    held.open();
    const finished = await inFlight;
    expect((await call(v2, after, 'k-in-flight')).response.body).toEqual(finished.response.body);
    const fresh = await call(v2, after, 'k-new');
    expect(fresh.replayed).toBe(false);
    expect(fresh.response.body).toEqual({
      kind: 'json',
      value: { run: 3, version: 'exec:order:v2' },
    });
    expect(runs).toBe(3);
  });

  it('answers a response above maxResponseBytes with its refusal and keeps that: the retry replays it', async () => {
    const { executor } = node();
    const route = idempotentRoute({ maxResponseBytes: 16 });
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => json({ runs: ++runs, padding: 'x'.repeat(32) }),
      });
    const refusal = {
      status: 413,
      headers: { 'content-type': 'application/problem+json' },
      body: {
        kind: 'json',
        value: {
          type: ProblemType.payloadTooLarge,
          title: 'Response too large to keep',
          status: 413,
          detail:
            'The request ran once but its response could not be kept; retries of this key get this error.',
          limitBytes: 16,
        },
      },
    };
    expect(await call()).toEqual({ response: refusal, replayed: false });
    expect(await call()).toEqual({
      response: { ...refusal, headers: { ...refusal.headers, 'idempotent-replayed': 'true' } },
      replayed: true,
    });
    expect(runs).toBe(1);
  });

  it('reports a lease lost to a takeover and confirms nothing', async () => {
    const clock = new ManualClock();
    const store = new Store({ clock });
    const first = node(store, clock);
    const second = node(store, clock);
    const route = idempotentRoute({ leaseTtl: 1_000 });
    const keys = resolveCallKeys(route, request('k'));
    const outcome = first.executor.execute({
      route,
      keys,
      handler: async () => {
        clock.time += 5_000;
        const takeover = await second.executor.execute({
          route,
          keys,
          handler: async () => json({ by: 'second' }),
        });
        expect(takeover.replayed).toBe(false);
        return json({ by: 'first' });
      },
    });
    await expect(outcome).rejects.toBeInstanceOf(LeaseLostError);
    expect(first.events.map((e) => e.outcome)).toContain('lease_lost');
    const replay = await first.executor.execute({
      route,
      keys,
      handler: async () => json({ by: 'third' }),
    });
    expect(replay.response.body).toEqual({ kind: 'json', value: { by: 'second' } });
  });

  it('refuses transactional routes on a store without transactions', async () => {
    const { executor } = node();
    const route = idempotentRoute({ transactional: true });
    await expect(
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => json({}),
      }),
    ).rejects.toBeInstanceOf(TransactionalStoreRequiredError);
  });

  it('puts the guard flight in front of the store unless the store answers at cache speed and the route refuses duplicates', async () => {
    for (const onBusy of ['reject', 'wait'] as const) {
      const { executor, coordinator } = node();
      const acquire = jest.spyOn(coordinator, 'acquire');
      const peek = jest.spyOn(coordinator, 'peek');
      const route = idempotentRoute({ onBusy });
      const call = () =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request('k-guard')),
          handler: async () => json({ ok: true }),
        });
      await call();
      await call();
      const guarded = Store === GuardedRecordStore || onBusy === 'wait';
      // The retry is answered by the guard's held replay, asked once per call: no acquire.
      expect(acquire).toHaveBeenCalledTimes(guarded ? 1 : 0);
      expect(peek.mock.results.map((result) => result.value !== undefined)).toEqual(
        guarded ? [false, true] : [],
      );
    }
  });
});

const node = nodeOn;

describe('ProtectedCallExecutor: SingleFlight routes', () => {
  it('coalesces concurrent calls into one run and caches the result', async () => {
    const { executor, events } = node();
    const route = flightRoute();
    const held = gate();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('ignored')),
        handler: async () => {
          runs += 1;
          held.signal();
          await held.opened;
          return json({ runs }, 200);
        },
      });
    const calls = Array.from({ length: 20 }, call);
    await held.entered;
    held.open();
    const results = await Promise.all(calls);
    const late = await call();
    expect(runs).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(late.replayed).toBe(true);
    expect(late.response.headers['idempotent-replayed']).toBe('true');
    expect(late.response.headers['x-trace']).toBeUndefined();
    expect(
      events
        .filter((e) => e.mechanism === 'single-flight')
        .map((e) => e.outcome)
        .sort(),
    ).toEqual([...Array(19).fill('joined'), 'cached', 'executed'].sort());
  });

  it("refuses, under onBusy: 'reject', callers that joined before the handler started, as it starts", async () => {
    const { executor } = node();
    const route = flightRoute({ onBusy: 'reject' });
    const held = gate();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('ignored')),
        handler: async () => {
          runs += 1;
          held.signal();
          await held.opened;
          return json({ runs }, 200);
        },
      });
    const outcomes = await refusedWhileHeld(Array.from({ length: 20 }, call), held, 19);

    expect(outcomes.filter((o) => o.error instanceof FlightBusyError)).toHaveLength(19);
    expect(outcomes.filter((o) => o.result?.replayed === false)).toHaveLength(1);
    expect(runs).toBe(1);
  });

  it("serves a cached result to every concurrent caller, even with onBusy: 'reject'", async () => {
    const { executor } = node();
    const route = flightRoute({ onBusy: 'reject' });
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('ignored')),
        handler: async () => json({ run: ++runs }, 200),
      });
    await call();
    const settled = await Promise.allSettled(Array.from({ length: 30 }, call));
    expect(settled.filter((r) => r.status === 'fulfilled' && r.value.replayed)).toHaveLength(30);
    expect(runs).toBe(1);
  });

  it('shares a returned deterministic 4xx for errorTtl, but never a 5xx', async () => {
    const { executor } = node();
    const route = flightRoute({ resultTtl: 0, errorTtl: 60_000 });
    let runs = 0;
    const call = (status: number) =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => json({ runs: ++runs }, status),
      });
    expect(await call(400)).toMatchObject({ replayed: false, response: { status: 400 } });
    expect(await call(400)).toMatchObject({
      replayed: true,
      response: { status: 400, body: { value: { runs: 1 } } },
    });

    const other = flightRoute({ operation: 'report-5xx', resultTtl: 0, errorTtl: 60_000 });
    let failures = 0;
    const fail = () =>
      executor.execute({
        route: other,
        keys: resolveCallKeys(other, request('k')),
        handler: async () => json({ f: ++failures }, 502),
      });
    expect((await fail()).response.status).toBe(502);
    expect((await fail()).replayed).toBe(false);
    expect(failures).toBe(2);
  });
});

describe('ProtectedCallExecutor: responses that are not kept', () => {
  it("never hands a leader's 5xx to a waiting local joiner: the joiner runs again", async () => {
    const { executor } = node();
    const route = flightRoute({ operation: 'report-down' });
    const held = gate();
    let runs = 0;
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request('k')),
        handler: async () => {
          runs += 1;
          if (runs > 1) return json({ down: false }, 200, { 'set-cookie': 'session=joiner' });
          held.signal();
          await held.opened;
          return json({ down: true }, 503, { 'set-cookie': 'session=leader', 'retry-after': '5' });
        },
      });
    const leader = call();
    await held.entered;
    const joiner = call();
    held.open();
    const [own, retried] = await Promise.all([leader, joiner]);
    expect(runs).toBe(2);
    expect(own).toMatchObject({ replayed: false, response: { status: 503 } });
    expect(own.response.headers['set-cookie']).toBe('session=leader');
    expect(retried).toMatchObject({ replayed: false, response: { status: 200 } });
    expect(retried.response.headers['set-cookie']).toBe('session=joiner');
  });
});

describe('ProtectedCallExecutor: both decorators on one route', () => {
  it('records each identity durably while coalescing their shared work', async () => {
    const { executor } = node();
    const route = defineProtectedRoute(
      'Summaries.create',
      {
        idempotent: { operation: 'summary', scope: 'user.tenant' },
        singleFlight: { operation: 'summary-render', target: 'params.id', input: [], resultTtl: 0 },
      },
      defaults,
    );
    const held = gate();
    let runs = 0;
    const call = (key: string) =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request(key)),
        handler: async () => {
          runs += 1;
          held.signal();
          await held.opened;
          return json({ summary: 'once' }, 201);
        },
      });
    const a = call('key-a');
    await held.entered;
    const b = call('key-b');
    held.open();
    const [first, second] = await Promise.all([a, b]);
    expect(runs).toBe(1);
    expect(first.response.body).toEqual(second.response.body);
    expect((await call('key-a')).replayed).toBe(true);
    expect((await call('key-b')).replayed).toBe(true);
    expect(runs).toBe(1);
  });

  it('answers a new record with a result its SingleFlight shared as fresh, not as a replay', async () => {
    const { executor } = node();
    const route = defineProtectedRoute(
      'Summaries.cached',
      {
        idempotent: { operation: 'summary-cached', scope: 'user.tenant' },
        singleFlight: { operation: 'summary-cached-render', target: 'params.id', input: [] },
      },
      defaults,
    );
    let runs = 0;
    const call = (key: string) =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, request(key)),
        handler: async () => json({ summary: 'cached', run: ++runs }, 201),
      });
    const first = await call('key-a');
    const other = await call('key-b');
    expect(runs).toBe(1);
    expect(other.replayed).toBe(false);
    expect(other.response.headers[REPLAYED_HEADER]).toBeUndefined();
    expect(other.response.body).toEqual(first.response.body);
    const retry = await call('key-b');
    expect(retry.replayed).toBe(true);
    expect(retry.response.headers[REPLAYED_HEADER]).toBe('true');
  });
});

describe('ProtectedCallExecutor: the signal handed to the handler', () => {
  const aborted = (signal: AbortSignal) =>
    new Promise<unknown>((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
    );

  it.each([
    ['behind the guard flight', GuardedRecordStore],
    ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
  ])('aborts when the record is taken over (%s)', async (_, Store) => {
    const clock = new ManualClock();
    const store = new Store({ clock });
    const first = nodeOn(store, clock);
    const second = nodeOn(store, clock);
    const route = idempotentRoute({ leaseTtl: 60 });
    const keys = resolveCallKeys(route, request('k-signal'));
    let reason: unknown;
    const outcome = first.executor.execute({
      route,
      keys,
      handler: async ({ signal }) => {
        clock.time += 5_000;
        await second.executor.execute({ route, keys, handler: async () => json({ by: 2 }) });
        reason = await aborted(signal);
        return json({ by: 1 });
      },
    });
    await expect(outcome).rejects.toBeInstanceOf(LeaseLostError);
    expect(reason).toBeInstanceOf(LeaseLostError);
  });

  it("aborts when a SingleFlight route's lease runs out", async () => {
    const clock = new ManualClock();
    const { executor } = nodeOn(new InMemoryIdempotencyRecordStore(), clock);
    const route = flightRoute({ leaseTtl: 60 });
    let reason: unknown;
    const outcome = executor.execute({
      route,
      keys: resolveCallKeys(route, request('k')),
      handler: async ({ signal }) => {
        clock.time += 5_000;
        reason = await aborted(signal);
        return json({ ok: true });
      },
    });
    await expect(outcome).rejects.toBeInstanceOf(LeaseLostError);
    expect(reason).toBeInstanceOf(LeaseLostError);
  });
});

describe('ProtectedCallExecutor: event listeners', () => {
  it('ignores listeners that throw or reject, without an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const seen: string[] = [];
      const executor = new ProtectedCallExecutor(
        createProtectionEngines({
          coordinator: new InMemoryFlightCoordinator({ sweepInterval: 0 }),
          store: new InMemoryIdempotencyRecordStore(),
          events: [
            () => {
              throw new Error('listener bug');
            },
            async () => Promise.reject(new Error('async listener bug')),
            (event) => seen.push(event.outcome),
          ],
        }),
      );
      const route = idempotentRoute();
      const call = () =>
        executor.execute({
          route,
          keys: resolveCallKeys(route, request('k-listeners')),
          handler: async () => json({ ok: true }),
        });
      await expect(call()).resolves.toMatchObject({ replayed: false });
      await expect(call()).resolves.toMatchObject({ replayed: true });
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toEqual(['executed', 'replayed']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
