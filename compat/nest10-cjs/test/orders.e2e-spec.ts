import { INestApplication, LoggerService } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { ProblemType } from '@oncely/core';
import { randomUUID } from 'crypto';
import * as request from 'supertest';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/configure-app';
import { PaymentsGateway } from '../src/orders/payments.gateway';

/** Counts charges (one per handler execution) and can hold them until the test lets go. */
class CountingPayments extends PaymentsGateway {
  charges = 0;
  private held: Promise<void> | undefined;

  hold(): () => void {
    let release: () => void;
    this.held = new Promise((resolve) => (release = resolve));
    return () => {
      this.held = undefined;
      release();
    };
  }

  async charge(account: string, amount: number): Promise<string> {
    this.charges += 1;
    await this.held;
    return super.charge(account, amount);
  }
}

/** Keeps every warning and error Nest logs (its adapters warn through it). */
class RecordingLogger implements LoggerService {
  readonly logged: string[] = [];
  log(): void {}
  warn(message: unknown, context?: string): void {
    this.logged.push(`warn ${context}: ${message}`);
  }
  error(message: unknown, context?: string): void {
    this.logged.push(`error ${context}: ${message}`);
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error('timed out waiting for the handler');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(['express', 'fastify'])('orders on %s', (platform) => {
  const payments = new CountingPayments();
  const logger = new RecordingLogger();
  const fastifyLog: string[] = [];
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(PaymentsGateway)
      .useValue(payments)
      .compile();
    app =
      platform === 'express'
        ? moduleRef.createNestApplication({ logger })
        : moduleRef.createNestApplication<NestFastifyApplication>(
            new FastifyAdapter({
              logger: { level: 'warn', stream: { write: (line: string) => fastifyLog.push(line) } },
            }),
            { logger },
          );
    configureApp(app);
    // Listening, so that concurrent requests share one server.
    await app.listen(0, '127.0.0.1');
  });

  afterAll(() => app?.close());

  beforeEach(() => {
    payments.charges = 0;
  });

  afterEach(() => {
    // Neither Nest nor Fastify may warn about oncely's responses (a Content-Type mismatch, …).
    expect(logger.logged).toEqual([]);
    expect(fastifyLog).toEqual([]);
  });

  const order = { cartId: 'cart-77', quantity: 2 };
  const post = (key: string, body: object) =>
    request(app.getHttpServer())
      .post('/orders')
      .set('x-user-id', 'u-1')
      .set('x-tenant-id', 'acme')
      .set('idempotency-key', key)
      .send(body);

  it('replays a completed request: same status, body and Location, marked as a replay', async () => {
    const key = randomUUID();
    const first = await post(key, order);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.any(String), ...order });
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const replay = await post(key, order);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers['location']).toBe(`/orders/${first.body.id}`);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(payments.charges).toBe(1);
  });

  it('keeps the refusal of a file an async handler returned: the retry replays it, one charge', async () => {
    const key = randomUUID();
    const send = () =>
      request(app.getHttpServer())
        .post('/orders/receipts')
        .set('x-user-id', 'u-1')
        .set('x-tenant-id', 'acme')
        .set('idempotency-key', key)
        .send(order);
    const first = await send();
    expect(first.status).toBe(500);
    expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(first.body).toMatchObject({ type: ProblemType.unsupportedResponse, status: 500 });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const retry = await send();
    expect(retry.status).toBe(500);
    expect(retry.text).toBe(first.text);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(payments.charges).toBe(1);
  });

  it('answers a retry while the first request runs with 409 and Retry-After', async () => {
    const key = randomUUID();
    const release = payments.hold();
    const first = post(key, order).then((response) => response);
    try {
      await until(() => payments.charges === 1);
      const retry = await post(key, order);
      expect(retry.status).toBe(409);
      expect(retry.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(Number(retry.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(retry.body).toMatchObject({ type: ProblemType.requestInFlight, status: 409 });
    } finally {
      release();
    }
    expect((await first).status).toBe(201);
    expect(payments.charges).toBe(1);
  });

  it('refuses the same key with another payload: 422 problem+json', async () => {
    const key = randomUUID();
    expect((await post(key, order)).status).toBe(201);

    const reused = await post(key, { ...order, quantity: 3 });
    expect(reused.status).toBe(422);
    expect(reused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(reused.body).toMatchObject({ type: ProblemType.payloadMismatch, status: 422 });
    expect(payments.charges).toBe(1);
  });

  it('refuses a principal without the key field: 400 problem+json', async () => {
    const response = await request(app.getHttpServer())
      .post('/orders')
      .set('x-user-id', 'u-1')
      .set('idempotency-key', randomUUID())
      .send(order);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: ProblemType.missingKeyField,
      status: 400,
      field: 'user.tenantId',
    });
    expect(payments.charges).toBe(0);
  });

  it('runs 10 concurrent duplicates once', async () => {
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, () => post(key, order)));

    expect(payments.charges).toBe(1);
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const created = responses.filter((response) => response.status === 201);
    expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
  });

  it("leaves every other error to the app's catch-all filter", async () => {
    const response = await request(app.getHttpServer()).post('/orders').send(order);
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      statusCode: 401,
      timestamp: expect.any(String),
      path: '/orders',
    });
  });
});
