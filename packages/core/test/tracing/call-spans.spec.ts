import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  CALL_SPAN_ATTRIBUTES,
  IdempotencyConflictError,
  IdempotencyMismatchError,
  MissingKeyFieldError,
  OncelyConfigurationError,
  createOncelyEngine,
  createOpenTelemetryTracer,
  type OncelyEngine,
  type OncelyEngineOptions,
} from '@oncely/core';
import { recordKeyHash, resolveCallKeys, type HttpResponse } from '@oncely/core/adapter';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { createHash, randomUUID } from 'node:crypto';

const { SpanKind, SpanStatusCode, context, trace } = otel;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
});

afterEach(() => exporter.reset());

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
});

const SECRET = 'card-4242-SECRET';
const TENANT = 'tenant-acme-7731';
const CLIENT_KEY = 'client-key-9f1c';

const engines: OncelyEngine[] = [];
afterAll(() => Promise.all(engines.map((engine) => engine.close())));

/** An engine as an app builds it: OpenTelemetry found by itself, once `start()` resolved. */
async function engineWith(options: Partial<OncelyEngineOptions> = {}): Promise<OncelyEngine> {
  const engine = createOncelyEngine({ namespace: `tr-${randomUUID().slice(0, 8)}`, ...options });
  engines.push(engine);
  await engine.start();
  return engine;
}

const json = (value: unknown, status = 201): HttpResponse => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value },
});

const order = (body: object = { card: SECRET, qty: 1 }) => ({
  body,
  headers: { 'idempotency-key': CLIENT_KEY },
  user: { tenant: TENANT },
});

function orders(engine: OncelyEngine) {
  const route = engine.defineRoute(`Orders.create-${randomUUID()}`, {
    idempotent: { operation: 'order', scope: 'user.tenant' },
  });
  const call = (
    handler: () => Promise<HttpResponse> = async () => json({ ok: true }),
    request = order(),
  ) => engine.executor.execute({ route, keys: resolveCallKeys(route, request), handler });
  return { route, call };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let signal!: () => void;
  const entered = new Promise<void>((resolve) => (signal = resolve));
  return { opened, open, entered, signal };
}

const oncelySpans = (): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.name.startsWith('oncely '));

const attributesOf = (span: ReadableSpan) => span.attributes;

describe('one span per protected call, through OpenTelemetry', () => {
  it('traces an executed call: name, kind, operation, mechanism, decision and key hash', async () => {
    const engine = await engineWith();
    const { route, call } = orders(engine);
    await call();
    const spans = oncelySpans();
    expect(spans).toHaveLength(1);
    const [span] = spans;
    const operation = route.idempotent!.operation;
    expect(span!.name).toBe(`oncely ${operation}`);
    expect(span!.kind).toBe(SpanKind.INTERNAL);
    expect(span!.instrumentationScope.name).toBe('@oncely/core');
    const identity = resolveCallKeys(route, order()).idempotency!.identity;
    expect(attributesOf(span!)).toEqual({
      [CALL_SPAN_ATTRIBUTES.operation]: operation,
      [CALL_SPAN_ATTRIBUTES.mechanism]: 'idempotency',
      [CALL_SPAN_ATTRIBUTES.decision]: 'executed',
      [CALL_SPAN_ATTRIBUTES.keyHash]: recordKeyHash(identity),
    });
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('traces a replay with the same key hash, without running the handler again', async () => {
    const engine = await engineWith();
    const { call } = orders(engine);
    let runs = 0;
    const handler = async () => json({ run: ++runs });
    await call(handler);
    const replay = await call(handler);
    expect(replay.replayed).toBe(true);
    expect(runs).toBe(1);
    const [first, second] = oncelySpans();
    expect(oncelySpans()).toHaveLength(2);
    expect(second!.attributes[CALL_SPAN_ATTRIBUTES.decision]).toBe('replayed');
    expect(second!.attributes[CALL_SPAN_ATTRIBUTES.keyHash]).toBe(
      first!.attributes[CALL_SPAN_ATTRIBUTES.keyHash],
    );
  });

  it('traces a SingleFlight follower that joined the leader in this process', async () => {
    const engine = await engineWith();
    const route = engine.defineRoute('Reports.get', {
      singleFlight: { operation: 'report', target: 'params.id', input: [] },
    });
    const keys = resolveCallKeys(route, { params: { id: 'r-1' } });
    const held = gate();
    let runs = 0;
    const handler = async () => {
      runs += 1;
      held.signal();
      await held.opened;
      return json({ report: 1 }, 200);
    };
    const leader = engine.executor.execute({ route, keys, handler });
    await held.entered;
    const follower = engine.executor.execute({ route, keys, handler });
    held.open();
    await Promise.all([leader, follower]);
    expect(runs).toBe(1);
    const decisions = oncelySpans().map((span) => span.attributes[CALL_SPAN_ATTRIBUTES.decision]);
    expect(decisions.sort()).toEqual(['executed', 'joined']);
    for (const span of oncelySpans()) {
      expect(span.attributes[CALL_SPAN_ATTRIBUTES.mechanism]).toBe('single-flight');
      expect(span.attributes[CALL_SPAN_ATTRIBUTES.keyHash]).toBe(
        createHash('sha256').update(keys.singleFlight!.key).digest('hex'),
      );
    }
  });

  it('traces a 409 duplicate in flight and a 422 payload mismatch as refusals, not failures', async () => {
    const engine = await engineWith();
    const { call } = orders(engine);
    const held = gate();
    const first = call(async () => {
      held.signal();
      await held.opened;
      return json({ ok: true });
    });
    await held.entered;
    await expect(call()).rejects.toBeInstanceOf(IdempotencyConflictError);
    held.open();
    await first;
    await expect(call(undefined, order({ card: SECRET, qty: 2 }))).rejects.toBeInstanceOf(
      IdempotencyMismatchError,
    );
    const spans = oncelySpans();
    expect(spans).toHaveLength(3);
    const byDecision = new Map(
      spans.map((span) => [span.attributes[CALL_SPAN_ATTRIBUTES.decision], span]),
    );
    expect([...byDecision.keys()].sort()).toEqual(['conflict', 'executed', 'mismatch']);
    expect(byDecision.get('conflict')!.attributes[CALL_SPAN_ATTRIBUTES.errorType]).toBe(
      'IdempotencyConflictError',
    );
    expect(byDecision.get('mismatch')!.attributes[CALL_SPAN_ATTRIBUTES.errorType]).toBe(
      'IdempotencyMismatchError',
    );
    for (const span of spans) expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks a handler's failure ERROR with the error's class only, never its message", async () => {
    class PaymentDeclinedError extends Error {}
    const engine = await engineWith();
    const { call } = orders(engine);
    await expect(
      call(async () => {
        throw new PaymentDeclinedError(`declined ${SECRET} for ${TENANT}`);
      }),
    ).rejects.toBeInstanceOf(PaymentDeclinedError);
    const [span] = oncelySpans();
    expect(span!.attributes[CALL_SPAN_ATTRIBUTES.decision]).toBe('failed');
    expect(span!.attributes[CALL_SPAN_ATTRIBUTES.errorType]).toBe('PaymentDeclinedError');
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'PaymentDeclinedError' });
    expect(span!.events).toEqual([]);
  });

  it('is the child of the active span, and the parent of the spans its handler starts', async () => {
    const engine = await engineWith();
    const { call } = orders(engine);
    const tracer = trace.getTracer('app');
    await tracer.startActiveSpan('POST /orders', async (request) => {
      await call(() =>
        tracer.startActiveSpan('charge card', async (charge) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          charge.end();
          return json({ ok: true });
        }),
      );
      request.end();
    });
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.find((span) => span.name === name)!;
    const [oncely] = oncelySpans();
    const outer = named('POST /orders');
    const charge = named('charge card');
    expect(spans).toHaveLength(3);
    expect(oncely!.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(charge.parentSpanContext?.spanId).toBe(oncely!.spanContext().spanId);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it('never puts raw input in a span: no key field, body value or client key', async () => {
    const engine = await engineWith();
    const { call } = orders(engine);
    const flight = engine.defineRoute('Quotes.get', {
      singleFlight: { operation: 'quote', scope: 'user.tenant', target: 'body.card' },
    });
    const handler = async () => json({ ok: true });
    await call(handler);
    await call(handler);
    await expect(call(handler, order({ card: SECRET, qty: 3 }))).rejects.toThrow();
    await engine.executor.execute({
      route: flight,
      keys: resolveCallKeys(flight, order()),
      handler,
    });
    const spans = oncelySpans();
    expect(spans).toHaveLength(4);
    const written = JSON.stringify(
      spans.map((span) => [span.name, span.attributes, span.status, span.events]),
    );
    for (const secret of [SECRET, TENANT, CLIENT_KEY]) expect(written).not.toContain(secret);
  });

  it('traces value calls too, including one refused for a missing key field', async () => {
    const engine = await engineWith();
    const route = engine.defineRoute('Jobs.settle', {
      idempotent: { operation: 'settle', target: 'args.0.batch', idempotencyKey: 'ignored' },
    });
    const run = async () => ({ settled: true });
    await engine.executor.executeValue({ route, keyContext: { args: [{ batch: 'b-1' }] }, run });
    await expect(
      engine.executor.executeValue({ route, keyContext: { args: [{}] }, run }),
    ).rejects.toBeInstanceOf(MissingKeyFieldError);
    const decisions = oncelySpans().map((span) => [
      span.attributes[CALL_SPAN_ATTRIBUTES.decision],
      span.attributes[CALL_SPAN_ATTRIBUTES.keyHash] !== undefined,
      span.attributes[CALL_SPAN_ATTRIBUTES.errorType],
    ]);
    expect(decisions).toEqual([
      ['executed', true, undefined],
      ['refused', false, 'MissingKeyFieldError'],
    ]);
  });

  it('traces the follower on another node, sharing the leader over Redis', async () => {
    await requireService('redis');
    const keyPrefix = `oncely-test:tracing:${randomUUID().slice(0, 8)}:`;
    const namespace = `tr-${randomUUID().slice(0, 8)}`;
    const waiting = gate();
    /** Says when the follower waits on the leader's lease. */
    class WatchedCoordinator extends RedisFlightCoordinator {
      override waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal) {
        waiting.signal();
        return super.waitForNotice(key, timeoutMs, signal);
      }
    }
    const node = async (coordinator: RedisFlightCoordinator) => {
      const engine = createOncelyEngine({ namespace, coordinator });
      engines.push(engine);
      await engine.start();
      const route = engine.defineRoute('Reports.get', {
        singleFlight: { operation: 'report', target: 'params.id', input: [], wait: 10_000 },
      });
      return { engine, route, keys: resolveCallKeys(route, { params: { id: 'r-1' } }) };
    };
    const a = await node(new RedisFlightCoordinator(services.redis, { keyPrefix }));
    const b = await node(new WatchedCoordinator(services.redis, { keyPrefix }));
    const held = gate();
    let runs = 0;
    const handler = async () => {
      runs += 1;
      held.signal();
      await held.opened;
      return json({ report: 1 }, 200);
    };
    const leader = a.engine.executor.execute({ route: a.route, keys: a.keys, handler });
    await held.entered;
    const follower = b.engine.executor.execute({ route: b.route, keys: b.keys, handler });
    await waiting.entered;
    held.open();
    await Promise.all([leader, follower]);
    expect(runs).toBe(1);
    const decisions = oncelySpans().map((span) => span.attributes[CALL_SPAN_ATTRIBUTES.decision]);
    expect(decisions.sort()).toEqual(['executed', 'shared']);
  });
});

describe('without tracing', () => {
  it('makes no span with tracing: false, while the SDK records everything else', async () => {
    const engine = await engineWith({ tracing: false });
    const { call } = orders(engine);
    await trace.getTracer('app').startActiveSpan('POST /orders', async (request) => {
      await call();
      request.end();
    });
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['POST /orders']);
  });

  it('runs calls as usual when the API is there but no SDK records anything', async () => {
    const engine = await engineWith({
      tracing: createOpenTelemetryTracer(otel, { tracerProvider: new otel.ProxyTracerProvider() }),
    });
    const { call } = orders(engine);
    let runs = 0;
    const handler = async () => json({ run: ++runs });
    expect((await call(handler)).replayed).toBe(false);
    expect((await call(handler)).replayed).toBe(true);
    expect(runs).toBe(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('refuses a tracing option that is neither false nor a CallTracer', () => {
    expect(() => createOncelyEngine({ namespace: 'tr', tracing: true as never })).toThrow(
      OncelyConfigurationError,
    );
    expect(() => createOncelyEngine({ namespace: 'tr', tracing: {} as never })).toThrow(
      /option "tracing" must be false or a CallTracer/,
    );
  });
});
