import { Body, Controller, Headers, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { CALL_SPAN_ATTRIBUTES } from '@oncely/core';
import { IdempotentKey, OncelyModule } from '@oncely/nestjs';
import { IsInt, IsString } from 'class-validator';
import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Executions, Gates, uniqueNamespace } from '../fixtures/test-app.js';

const { SpanKind, SpanStatusCode, context, trace } = otel;

const SECRET = 'card-4242-SECRET';
const TENANT = 'tenant-globex-5512';

class PaymentDto {
  @IsString() card!: string;
  @IsInt() amount!: number;
}

@Controller('payments')
class PaymentsController {
  constructor(
    private readonly executions: Executions,
    private readonly gates: Gates,
  ) {}

  @Post()
  @IdempotentKey({ operation: 'payment-create', scope: 'headers.x-tenant-id' })
  create(@Body() dto: PaymentDto, @Headers('x-hold') hold?: string) {
    return trace.getTracer('shop').startActiveSpan('charge card', async (span) => {
      const run = this.executions.hit('payment');
      if (hold === 'yes') await this.gates.pass('payment');
      span.end();
      return { run, amount: dto.amount };
    });
  }
}

/** Stands in for the HTTP instrumentation: a SERVER span active while Express routes. */
function serverSpans(req: Request, res: Response, next: NextFunction): void {
  trace
    .getTracer('http')
    .startActiveSpan(`${req.method} ${req.path}`, { kind: SpanKind.SERVER }, (span) => {
      res.on('finish', () => span.end());
      next();
    });
}

describe('spans of protected routes in a Nest app on Express', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  let app: INestApplication;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
    const moduleRef = await Test.createTestingModule({
      imports: [OncelyModule.forRoot({ namespace: uniqueNamespace('otel') })],
      controllers: [PaymentsController],
      providers: [Executions, Gates],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.use(serverSpans);
    await app.init();
  });

  afterEach(() => exporter.reset());

  afterAll(async () => {
    await app.close();
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  const pay = (key: string, body: object = { card: SECRET, amount: 30 }, hold = 'no') =>
    request(app.getHttpServer())
      .post('/payments')
      .set('x-tenant-id', TENANT)
      .set('idempotency-key', key)
      .set('x-hold', hold)
      .send(body);

  /** The finished spans once `count` have ended: a server span ends after its response. */
  async function finished(count: number): Promise<ReadableSpan[]> {
    const deadline = Date.now() + 10_000;
    while (exporter.getFinishedSpans().length < count) {
      if (Date.now() > deadline) throw new Error(`Fewer than ${count} spans ended in 10 s.`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return exporter.getFinishedSpans();
  }

  it('traces the first call and its replay under the request span, the handler under oncely', async () => {
    const key = randomUUID();
    expect((await pay(key)).status).toBe(201);
    const replay = await pay(key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(app.get(Executions).of('payment')).toBe(1);

    // Two requests: two server spans, two oncely spans, one handler span.
    const spans = await finished(5);
    expect(spans).toHaveLength(5);
    const servers = spans.filter((span) => span.kind === SpanKind.SERVER);
    const calls = spans.filter((span) => span.name.startsWith('oncely '));
    const [charge] = spans.filter((span) => span.name === 'charge card');
    expect(calls.map((span) => span.attributes[CALL_SPAN_ATTRIBUTES.decision])).toEqual([
      'executed',
      'replayed',
    ]);
    for (const [index, call] of calls.entries()) {
      expect(call.name).toMatch(/^oncely otel-[0-9a-f]{8}:payment-create:v1$/);
      expect(call.kind).toBe(SpanKind.INTERNAL);
      expect(call.parentSpanContext?.spanId).toBe(servers[index]!.spanContext().spanId);
    }
    expect(charge!.parentSpanContext?.spanId).toBe(calls[0]!.spanContext().spanId);
    expect(calls[1]!.attributes[CALL_SPAN_ATTRIBUTES.keyHash]).toBe(
      calls[0]!.attributes[CALL_SPAN_ATTRIBUTES.keyHash],
    );
    const written = JSON.stringify(spans.map((span) => [span.name, span.attributes]));
    for (const secret of [SECRET, TENANT, key]) expect(written).not.toContain(secret);
  });

  it('traces a duplicate in flight (409) and a changed payload (422) as refusals', async () => {
    const gates = app.get(Gates);
    const key = randomUUID();
    const first = pay(key, undefined, 'yes').then((response) => response.status);
    await gates.entered$('payment');
    expect((await pay(key)).status).toBe(409);
    gates.open('payment');
    expect(await first).toBe(201);
    expect((await pay(key, { card: SECRET, amount: 31 })).status).toBe(422);

    const calls = (await finished(7)).filter((span) => span.name.startsWith('oncely '));
    const outcomes = calls.map((span) => [
      span.attributes[CALL_SPAN_ATTRIBUTES.decision],
      span.attributes[CALL_SPAN_ATTRIBUTES.errorType],
      span.status.code,
    ]);
    expect(outcomes.sort()).toEqual([
      ['conflict', 'IdempotencyConflictError', SpanStatusCode.UNSET],
      ['executed', undefined, SpanStatusCode.UNSET],
      ['mismatch', 'IdempotencyMismatchError', SpanStatusCode.UNSET],
    ]);
  });
});
