import type { INestApplication } from '@nestjs/common';
import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { OrdersController, ReportsController } from './fixtures/orders.controller.js';
import {
  createTestApp,
  Executions,
  Gates,
  PLATFORMS,
  uniqueNamespace,
} from './fixtures/test-app.js';

const order = (customer = 'c-1') => ({ customer, lines: [{ sku: 'sku-1', quantity: 2 }] });

describe.each(PLATFORMS)('HTTP semantics on %s (in-memory defaults)', (platform) => {
  let app: INestApplication;
  let executions: Executions;
  let gates: Gates;
  const post = (path: string, key: string | undefined, body: object, tenant = 't-1') => {
    const call = request(app.getHttpServer()).post(path).set('x-tenant', tenant);
    if (key !== undefined) call.set('idempotency-key', key);
    return call.send(body);
  };

  beforeAll(async () => {
    app = await createTestApp(platform, { namespace: uniqueNamespace() }, [
      OrdersController,
      ReportsController,
    ]);
    executions = app.get(Executions);
    gates = app.get(Gates);
  });

  afterAll(async () => {
    await app.close();
  });

  it('executes once, then replays status, body and the replay headers with Idempotent-Replayed', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, order());
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.headers.location).toBe('/orders/latest');
    expect(first.body).toMatchObject({
      execution: 1,
      customer: 'c-1',
      lines: 1,
      dtoInstance: true,
    });

    const replay = await post('/orders', key, order());
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe('/orders/latest');
    expect(replay.headers['content-type']).toMatch(/^application\/json/);
    expect(executions.of('order-create')).toBe(1);
  });

  it('accepts the key as a structured-field string: "k" and k are one key', async () => {
    const key = `k-${randomUUID()}`;
    const quoted = await post('/orders', `"${key}"`, order('sf'));
    const bare = await post('/orders', key, order('sf'));
    expect(bare.body).toEqual(quoted.body);
    expect(bare.headers['idempotent-replayed']).toBe('true');
  });

  it('answers 400 problem+json when the required key is missing', async () => {
    const response = await post('/orders', undefined, order());
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: ProblemType.idempotencyKeyMissing,
      status: 400,
      header: 'idempotency-key',
    });
    expect(response.body.detail).toContain('requires the "idempotency-key" header');
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['not a token', 'two words'],
    ['a quoted value that is not an sf-string', '"unterminated'],
  ])('answers 400 for a malformed key (%s)', async (_case, key) => {
    const response = await post('/orders', key, order());
    expect(response.status).toBe(400);
    expect(response.body.type).toBe(ProblemType.idempotencyKeyMalformed);
  });

  it('answers 400 listing the invalid properties before any key or record exists', async () => {
    const before = executions.of('order-create');
    const key = randomUUID();
    const response = await post('/orders', key, {
      customer: '',
      lines: [{ sku: 'a', quantity: 0 }],
    });
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.type).toBe(ProblemType.invalidBody);
    expect(response.body.errors.map((e: { property: string }) => e.property).sort()).toEqual([
      'customer',
      'lines.0.quantity',
    ]);
    // Nothing was recorded: the same key with a valid body executes normally (no 422, no replay).
    const valid = await post('/orders', key, order('after-invalid'));
    expect(valid.status).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
    expect(executions.of('order-create')).toBe(before + 1);
  });

  it('answers 400 naming the missing key field when the scope is absent', async () => {
    const response = await request(app.getHttpServer())
      .post('/orders')
      .set('idempotency-key', randomUUID())
      .send(order());
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: ProblemType.missingKeyField,
      field: 'user.tenantId',
    });
  });

  it('answers 401 where the route says a missing principal is unauthenticated', async () => {
    const response = await request(app.getHttpServer()).post('/orders/payments').send(order());
    expect(response.status).toBe(401);
    expect(response.body.type).toBe(ProblemType.unauthenticated);
  });

  it('answers 422 when the key is reused with another payload, and keeps the record', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, order('first'));
    const other = await post('/orders', key, order('second'));
    expect(other.status).toBe(422);
    expect(other.body.type).toBe(ProblemType.payloadMismatch);
    const replay = await post('/orders', key, order('first'));
    expect(replay.body).toEqual(first.body);
  });

  it('ignores @KeyIgnore() properties and transport headers when comparing payloads', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, {
      ...order('ki'),
      clientSentAt: '2026-01-01T00:00:00Z',
    })
      .set('x-request-id', 'trace-1')
      .set('traceparent', '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01');
    const second = await post('/orders', key, {
      ...order('ki'),
      clientSentAt: '2026-02-02T10:10:10Z',
    })
      .set('x-request-id', 'trace-2')
      .set('traceparent', '00-cccccccccccccccccccccccccccccccc-dddddddddddddddd-01');
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it('isolates tenants: one key from two tenants runs twice and never replays across', async () => {
    const key = randomUUID();
    const before = executions.of('order-create');
    const a = await post('/orders', key, order('iso'), 'tenant-a');
    const b = await post('/orders', key, order('iso'), 'tenant-b');
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
    expect(executions.of('order-create')).toBe(before + 2);
    const againA = await post('/orders', key, order('iso'), 'tenant-a');
    expect(againA.body.id).toBe(a.body.id);
  });

  it('answers 409 with Retry-After while the first request is in flight', async () => {
    const key = randomUUID();
    const customer = `inflight-${randomUUID()}`;
    const first = post('/orders/slow', key, order(customer)).then((r) => r);
    await gates.entered$(`slow:${customer}`);
    const duplicate = await post('/orders/slow', key, order(customer));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toBe(ProblemType.requestInFlight);
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    gates.open(`slow:${customer}`);
    const done = await first;
    expect(done.status).toBe(201);
    const replay = await post('/orders/slow', key, order(customer));
    expect(replay.body).toEqual(done.body);
  });

  it('refuses 49 concurrent duplicates of one idempotent request with 409, running it once', async () => {
    const key = randomUUID();
    const customer = `rush-${randomUUID()}`;
    const before = executions.of('order-slow');
    const first = post('/orders/slow', key, order(customer)).then((r) => r);
    await gates.entered$(`slow:${customer}`);
    const duplicates = await Promise.all(
      Array.from({ length: 49 }, () => post('/orders/slow', key, order(customer)).then((r) => r)),
    );
    gates.open(`slow:${customer}`);
    expect((await first).status).toBe(201);
    expect(duplicates.map((r) => r.status)).toEqual(Array(49).fill(409));
    expect(executions.of('order-slow')).toBe(before + 1);
  });

  it("answers 50 concurrent identical requests with one execution under onBusy: 'wait'", async () => {
    const key = randomUUID();
    const customer = `crowd-${randomUUID()}`;
    const before = executions.of('order-slow-wait');
    const calls = Array.from({ length: 50 }, () =>
      post('/orders/slow-wait', key, order(customer)).then((r) => r),
    );
    await gates.entered$(`slow-wait:${customer}`);
    gates.open(`slow-wait:${customer}`);
    const responses = await Promise.all(calls);
    expect(executions.of('order-slow-wait')).toBe(before + 1);
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
  });

  it('replays the stored status even on a route whose own status differs', async () => {
    const key = randomUUID();
    const v1 = await post('/orders/v1/refunds', key, {});
    const v2 = await post('/orders/v2/refunds', key, {});
    expect(v1.status).toBe(201);
    expect(v2.status).toBe(201);
    expect(v2.headers['idempotent-replayed']).toBe('true');
    expect(v2.headers['content-type']).toMatch(/^application\/json/);
    expect(v2.body).toEqual(v1.body);
    expect(v2.body.version).toBe(1);
  });

  it('replays a Buffer body byte for byte', async () => {
    const key = randomUUID();
    const raw = (call: request.Test) =>
      call.buffer(true).parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    const first = await raw(post('/orders/bytes', key, {}));
    const replay = await raw(post('/orders/bytes', key, {}));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(Buffer.compare(replay.body as Buffer, first.body as Buffer)).toBe(0);
    expect((first.body as Buffer).length).toBeGreaterThan(0);
  });

  it("waits for the first request and replays its outcome with onBusy: 'wait'", async () => {
    const key = randomUUID();
    const customer = `wait-${randomUUID()}`;
    const first = post('/orders/slow-wait', key, order(customer)).then((r) => r);
    await gates.entered$(`slow-wait:${customer}`);
    const duplicate = post('/orders/slow-wait', key, order(customer)).then((r) => r);
    gates.open(`slow-wait:${customer}`);
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store a 5xx: the retry runs the handler again', async () => {
    const key = randomUUID();
    const failed = await post('/orders/flaky', key, {});
    expect(failed.status).toBe(500);
    const retried = await post('/orders/flaky', key, {});
    expect(retried.status).toBe(201);
    expect(retried.body).toEqual({ execution: 2 });
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store thrown errors: a thrown 400 runs again on retry', async () => {
    const key = randomUUID();
    const first = await post('/orders/rejected', key, {});
    const second = await post('/orders/rejected', key, {});
    expect(first.status).toBe(400);
    expect(second.status).toBe(400);
    expect(second.body.execution).toBe(first.body.execution + 1);
  });

  it('answers 413 when the response is larger than the route keeps, and keeps nothing', async () => {
    const key = randomUUID();
    const response = await post('/orders/big', key, {});
    expect(response.status).toBe(413);
    expect(response.body.type).toBe(ProblemType.payloadTooLarge);
  });

  it('replays safe headers set through @Res({ passthrough }) but never Set-Cookie', async () => {
    const key = randomUUID();
    const first = await post('/orders/passthrough', key, {});
    expect(first.headers['set-cookie']).toBeDefined();
    const replay = await post('/orders/passthrough', key, {});
    expect(replay.headers.etag).toBe('"v1"');
    expect(replay.headers['set-cookie']).toBeUndefined();
    expect(replay.body).toEqual(first.body);
  });

  it('coalesces 50 concurrent identical requests into exactly one execution', async () => {
    const id = randomUUID();
    const server = app.getHttpServer();
    const calls = Array.from({ length: 50 }, () =>
      request(server)
        .get(`/reports/${id}`)
        .then((r) => r),
    );
    await gates.entered$(`report:${id}`);
    gates.open(`report:${id}`);
    const responses = await Promise.all(calls);
    expect(executions.of(`report:${id}`)).toBe(1);
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(responses.map((r) => r.body.renderedBy)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
  });

  it("refuses concurrent duplicates with 409 under onBusy: 'reject'", async () => {
    const id = randomUUID();
    const server = app.getHttpServer();
    const leader = request(server)
      .get(`/reports/${id}/strict`)
      .then((r) => r);
    await gates.entered$(`strict:${id}`);
    const duplicates = await Promise.all(
      Array.from({ length: 49 }, () =>
        request(server)
          .get(`/reports/${id}/strict`)
          .then((r) => r),
      ),
    );
    gates.open(`strict:${id}`);
    expect((await leader).status).toBe(200);
    expect(duplicates.map((r) => r.status)).toEqual(Array(49).fill(409));
    expect(duplicates[0]?.headers['retry-after']).toBeDefined();
    expect(executions.of(`strict:${id}`)).toBe(1);
  });

  it('shares and caches a thrown deterministic 4xx of a SingleFlight route', async () => {
    const id = randomUUID();
    const first = await request(app.getHttpServer()).get(`/reports/${id}/invalid`);
    const second = await request(app.getHttpServer()).get(`/reports/${id}/invalid`);
    expect(first.status).toBe(400);
    expect(second.status).toBe(400);
    expect(second.body).toEqual(first.body);
    expect(executions.of(`invalid:${id}`)).toBe(1);
  });
});
