import { Readable } from 'node:stream';
import {
  IdempotencyConflictError,
  IdempotencyMismatchError,
  InMemoryFlightCoordinator,
  MissingKeyFieldError,
  InMemoryRecordQuota,
  RecordQuotaExceededError,
  InMemoryIdempotencyRecordStore,
  UnsupportedResponseError,
  UnstorableValueError,
  type OncelyEvent,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  QuotaLimitedIdempotencyRecordStore,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  storedBodyOf,
  type ProtectedRoute,
} from '@oncely/core/adapter';

const defaults = { ...DEFAULT_PROTECTION, namespace: 'value' };

/** The in-memory store posing as a SQL one, so the executor puts the guard flight in front. */
class GuardedRecordStore extends InMemoryIdempotencyRecordStore {
  override readonly answersAtCacheSpeed = false;
}

function nodeOn(store: InMemoryIdempotencyRecordStore) {
  const events: OncelyEvent[] = [];
  const executor = new ProtectedCallExecutor(
    createProtectionEngines({
      coordinator: new InMemoryFlightCoordinator({ sweepInterval: 0 }),
      store,
      events: [(e) => events.push(e)],
    }),
  );
  return { executor, events };
}

const idempotentRoute = (
  onBusy: 'reject' | 'wait' = 'reject',
  maxResponseBytes?: number,
): ProtectedRoute =>
  defineProtectedRoute(
    'Payments.capture',
    {
      idempotent: {
        operation: 'capture',
        target: 'args.0.messageId',
        input: ['args.0.amount'],
        idempotencyKey: 'ignored',
        onBusy,
        ...(maxResponseBytes !== undefined && { maxResponseBytes }),
      },
    },
    defaults,
  );

const flightRoute = (): ProtectedRoute =>
  defineProtectedRoute(
    'Rates.quote',
    { singleFlight: { operation: 'quote', target: 'args.0.currency', input: [] } },
    defaults,
  );

const message = (messageId: string, amount = 100) => ({
  args: [{ messageId, amount, currency: 'EUR' }],
});

describe('storedBodyOf', () => {
  it('keeps nothing for undefined and null, bytes for a Uint8Array, JSON for the rest', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(storedBodyOf(undefined, 'R')).toEqual({ kind: 'empty' });
    expect(storedBodyOf(null, 'R')).toEqual({ kind: 'empty' });
    expect(storedBodyOf(bytes, 'R')).toEqual({ kind: 'bytes', value: bytes });
    expect(storedBodyOf('ok', 'R')).toEqual({ kind: 'json', value: 'ok' });
    expect(storedBodyOf(0, 'R')).toEqual({ kind: 'json', value: 0 });
    expect(storedBodyOf(false, 'R')).toEqual({ kind: 'json', value: false });
    expect(storedBodyOf([1], 'R')).toEqual({ kind: 'json', value: [1] });
    const dated = new Date(0);
    expect(storedBodyOf(dated, 'R')).toEqual({ kind: 'json', value: dated });
  });

  it.each([
    ['a Readable stream', Readable.from(['x'])],
    ['a ReadableStream', new ReadableStream()],
    ['a web Response', new Response('x')],
    ['a function', () => 1],
    ['a symbol', Symbol('s')],
    ['a bigint', 1n],
  ])('refuses %s, naming the route', (kind, value) => {
    expect(() => storedBodyOf(value, 'Files.read')).toThrow(
      new UnsupportedResponseError('Files.read', kind),
    );
  });
});

describe.each([
  ['behind the guard flight', GuardedRecordStore],
  ['on a store that answers at cache speed, alone', InMemoryIdempotencyRecordStore],
])('ProtectedCallExecutor.executeValue: idempotent routes, %s', (_, Store) => {
  it('runs once, then replays the kept value', async () => {
    const { executor, events } = nodeOn(new Store());
    const route = idempotentRoute();
    let runs = 0;
    const call = () =>
      executor.executeValue({
        route,
        keyContext: message('m-1'),
        run: async () => ({ captured: ++runs }),
      });
    expect(await call()).toEqual({ value: { captured: 1 }, replayed: false });
    expect(await call()).toEqual({ value: { captured: 1 }, replayed: true });
    expect(runs).toBe(1);
    expect(events.map((e) => `${e.mechanism}:${e.outcome}`)).toEqual([
      'idempotency:executed',
      'idempotency:replayed',
    ]);
  });

  it('replays bytes, null and undefined as they were', async () => {
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute();
    const call = (id: string, value: unknown) =>
      executor.executeValue({
        route,
        keyContext: message(id),
        run: async () => value,
      });
    await call('buffer', Buffer.from([7, 8]));
    await call('bytes', new Uint8Array([9]));
    await call('null', null);
    await call('undefined', undefined);
    const buffer = await call('buffer', 'not run');
    const bytes = await call('bytes', 'not run');
    expect(buffer.replayed).toBe(true);
    expect(Buffer.isBuffer(buffer.value)).toBe(true);
    expect([...(buffer.value as Buffer)]).toEqual([7, 8]);
    expect(Buffer.isBuffer(bytes.value)).toBe(false);
    expect(bytes.value).toStrictEqual(new Uint8Array([9]));
    expect(await call('null', 'not run')).toEqual({ value: null, replayed: true });
    expect(await call('undefined', 'not run')).toEqual({ value: undefined, replayed: true });
  });

  it('refuses a record that holds no kept value, rather than hand its caller a response', async () => {
    const store = new Store();
    const { executor } = nodeOn(store);
    const route = idempotentRoute();
    const key = resolveCallKeys(route, message('foreign')).idempotency!;
    const begun = await store.begin(key.identity, key.digest, {
      leaseTtlMs: 10_000,
      retentionMs: 60_000,
    });
    if (begun.kind !== 'acquired') throw new Error(`expected a new record, got ${begun.kind}`);
    await store.complete(begun.lease, {
      status: 200,
      headers: {},
      body: { kind: 'json', value: { captured: 'by an HTTP route' } },
    });
    const replay = executor.executeValue({
      route,
      keyContext: message('foreign'),
      run: async () => 'not run',
    });
    await expect(replay).rejects.toThrow(/holds a response oncely did not keep for a value call/);
  });

  it('keeps nothing when the handler throws: the redelivery runs again', async () => {
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute();
    let runs = 0;
    const call = () =>
      executor.executeValue({
        route,
        keyContext: message('m-2'),
        run: async () => {
          runs += 1;
          if (runs === 1) throw new Error('broker down');
          return 'captured';
        },
      });
    await expect(call()).rejects.toThrow('broker down');
    expect(await call()).toEqual({ value: 'captured', replayed: false });
    expect(runs).toBe(2);
  });

  it('keeps the refusal of a value it cannot keep: the handler never runs again', async () => {
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute();
    let runs = 0;
    const call = (value: unknown) =>
      executor.executeValue({
        route,
        keyContext: message('m-3'),
        run: async () => {
          runs += 1;
          return value;
        },
      });
    const refusal = expect.objectContaining({
      code: 'unstorable_value',
      route: 'Payments.capture',
      path: '$',
      reason: 'an instance of Readable cannot be serialised',
    });
    await expect(call(Readable.from(['x']))).rejects.toThrow(refusal);
    await expect(call('kept')).rejects.toThrow(refusal);
    await expect(call('kept')).rejects.toThrow(UnstorableValueError);
    expect(runs).toBe(1);
  });

  it('runs once a handler whose value is above maxResponseBytes: it and every retry get UnstorableValueError', async () => {
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute('reject', 64);
    let runs = 0;
    const call = () =>
      executor.executeValue({
        route,
        keyContext: message('m-large'),
        run: async () => ({ run: ++runs, padding: 'x'.repeat(128) }),
      });
    const refusal = expect.objectContaining({
      code: 'unstorable_value',
      route: 'Payments.capture',
      path: '$',
      reason: 'it is larger than the 64 bytes kept for it (maxResponseBytes)',
    });
    await expect(call()).rejects.toThrow(refusal);
    await expect(call()).rejects.toThrow(refusal);
    expect(runs).toBe(1);
  });

  it("keeps a class instance as JSON would send it under 'json' fidelity (messages, GraphQL)", async () => {
    class Receipt {
      constructor(readonly id: string) {}
    }
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute();
    let runs = 0;
    const call = () =>
      executor.executeValue({
        route,
        keyContext: message('m-json'),
        fidelity: 'json',
        run: async () => ({ receipt: new Receipt(`r-${++runs}`), at: new Date(5) }),
      });
    const expected = { receipt: { id: 'r-1' }, at: new Date(5) };
    expect(await call()).toStrictEqual({ value: expected, replayed: false });
    expect(await call()).toStrictEqual({ value: expected, replayed: true });
    expect(runs).toBe(1);
  });

  it('refuses the same identity with another payload, and a duplicate in flight', async () => {
    const { executor } = nodeOn(new Store());
    const route = idempotentRoute();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = executor.executeValue({
      route,
      keyContext: message('m-4'),
      run: async () => {
        started();
        await held;
        return 1;
      },
    });
    await running;
    await expect(
      executor.executeValue({
        route,
        keyContext: message('m-4'),
        run: async () => 2,
      }),
    ).rejects.toThrow(IdempotencyConflictError);
    release();
    expect(await first).toEqual({ value: 1, replayed: false });
    await expect(
      executor.executeValue({
        route,
        keyContext: message('m-4', 999),
        run: async () => 3,
      }),
    ).rejects.toThrow(IdempotencyMismatchError);
  });
});

describe('ProtectedCallExecutor.executeValue: SingleFlight routes', () => {
  it('runs concurrent calls once and hands every caller the value', async () => {
    const { executor } = nodeOn(new InMemoryIdempotencyRecordStore());
    const route = flightRoute();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let runs = 0;
    const calls = Array.from({ length: 5 }, () =>
      executor.executeValue({
        route,
        keyContext: message('ignored'),
        run: async (context) => {
          runs += 1;
          expect(context.signal.aborted).toBe(false);
          started();
          await held;
          return { rate: 1.08 };
        },
      }),
    );
    await running;
    release();
    const results = await Promise.all(calls);
    expect(runs).toBe(1);
    expect(results.map((r) => r.value)).toEqual(Array(5).fill({ rate: 1.08 }));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
  });
});

describe('ProtectedCallExecutor.executeValue: a call whose keys cannot be built', () => {
  it.each([
    ['an idempotent route', idempotentRoute, 'idempotency', 'value:capture:v1'],
    ['a SingleFlight route', flightRoute, 'single-flight', 'value:quote:v1'],
  ])(
    'on %s is refused with a refused event, running nothing',
    async (_, routeOf, mechanism, op) => {
      const { executor, events } = nodeOn(new InMemoryIdempotencyRecordStore());
      let runs = 0;
      const call = executor.executeValue({
        route: routeOf(),
        keyContext: { args: [{ amount: 5 }] },
        run: async () => ++runs,
      });
      await expect(call).rejects.toBeInstanceOf(MissingKeyFieldError);
      expect(runs).toBe(0);
      expect(events).toEqual([
        expect.objectContaining({
          mechanism,
          outcome: 'refused',
          operation: op,
          key: op,
          error: expect.any(MissingKeyFieldError),
        }),
      ]);
      expect(executor.inFlight).toBe(0);
    },
  );
});

describe('ProtectedCallExecutor.executeValue: a message over its tenant record quota', () => {
  it('is refused with a refused event, running nothing', async () => {
    const events: OncelyEvent[] = [];
    const executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator: new InMemoryFlightCoordinator({ sweepInterval: 0 }),
        store: new QuotaLimitedIdempotencyRecordStore(new InMemoryIdempotencyRecordStore(), {
          quota: new InMemoryRecordQuota(),
          limit: 1,
          windowMs: 60_000,
          scopeOf: () => 'tenant',
        }),
        events: [(e) => events.push(e)],
      }),
    );
    const route = idempotentRoute();
    let runs = 0;
    const call = (id: string) =>
      executor.executeValue({ route, keyContext: message(id), run: async () => ++runs });
    await call('q-1');
    await expect(call('q-2')).rejects.toBeInstanceOf(RecordQuotaExceededError);
    expect(runs).toBe(1);
    const refused = events.filter((e) => e.outcome === 'refused');
    expect(refused).toEqual([
      expect.objectContaining({
        mechanism: 'idempotency',
        operation: 'value:capture:v1',
        error: expect.any(RecordQuotaExceededError),
      }),
    ]);
    expect(refused[0]!.key).toContain('q-2');
  });
});
