import { ProblemType, UnsupportedResponseError } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { inMemoryBackend, redisPostgresBackend, type Backend } from './fixtures/backends.js';
import { createShopApp, type ShopApp } from './fixtures/shop.app.js';

const order = (customer = 'c-1') => ({ customer, lines: [{ sku: 'sku-1', quantity: 2 }] });

const raw = (call: request.Test) =>
  call.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });

describe.each([inMemoryBackend, redisPostgresBackend])('Express middleware on %p', (make) => {
  const backend: Backend = make();
  let shop: ShopApp;
  const post = (path: string, key: string | undefined, body: object, tenant = 't-1') => {
    const call = request(shop.app).post(path).set('x-tenant', tenant);
    if (key !== undefined) call.set('idempotency-key', key);
    return call.send(body);
  };

  beforeAll(async () => {
    await backend.start();
    const oncely = await backend.oncely();
    shop = createShopApp(oncely, backend.ordersTable ? { ordersTable: backend.ordersTable } : {});
  });

  afterAll(async () => {
    await backend.stop();
  });

  it('executes once, then replays status, body and replay headers with Idempotent-Replayed', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, order());
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.headers.location).toBe('/orders/latest');
    expect(first.body).toMatchObject({ execution: 1, customer: 'c-1', lines: 1 });

    const replay = await post('/orders', key, order());
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe('/orders/latest');
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect(replay.text).toBe(first.text);
    expect(shop.executions.of('order-create')).toBe(1);
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
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['not a token', 'two words'],
    ['a quoted value that is not an sf-string', '"unterminated'],
  ])('answers 400 for a malformed key (%s)', async (_case, key) => {
    const response = await post('/orders', key, order());
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.type).toBe(ProblemType.idempotencyKeyMalformed);
  });

  it('answers 400 naming the missing scope field', async () => {
    const response = await request(shop.app)
      .post('/orders')
      .set('idempotency-key', randomUUID())
      .send(order());
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: ProblemType.missingKeyField,
      field: 'headers.x-tenant',
    });
  });

  it('answers 400 for an invalid body, and leaves no lease, cache entry or record', async () => {
    const key = randomUUID();
    const invalid = await post('/orders', key, {
      customer: '',
      lines: [{ sku: 'a', quantity: 0 }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(invalid.body.type).toBe(ProblemType.invalidBody);
    expect(invalid.body.errors.map((e: { property: string }) => e.property).sort()).toEqual([
      'customer',
      'lines.0.quantity',
    ]);
    if (backend.ordersTable) {
      expect(await backend.redisKeys(key)).toEqual([]);
      expect(await backend.recordRows(key)).toBe(0);
    }

    // Control: a valid request with that key executes normally and does leave state behind.
    const before = shop.executions.of('order-create');
    const valid = await post('/orders', key, order('after-invalid'));
    expect(valid.status).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
    expect(shop.executions.of('order-create')).toBe(before + 1);
    if (backend.ordersTable) {
      expect((await backend.redisKeys(key))!.length).toBeGreaterThan(0);
      expect(await backend.recordRows(key)).toBe(1);
    }
  });

  it('answers 422 when the key is reused with another payload, and keeps the record', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, order('first'));
    const other = await post('/orders', key, order('second'));
    expect(other.status).toBe(422);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(other.body.type).toBe(ProblemType.payloadMismatch);
    const replay = await post('/orders', key, order('first'));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('answers 409 with Retry-After while the first request is in flight', async () => {
    const key = randomUUID();
    const customer = `inflight-${randomUUID()}`;
    const first = post('/orders/slow', key, order(customer)).then((r) => r);
    await shop.gates.entered(`slow:${customer}`);
    const duplicate = await post('/orders/slow', key, order(customer));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(duplicate.body.type).toBe(ProblemType.requestInFlight);
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    shop.gates.open(`slow:${customer}`);
    const done = await first;
    expect(done.status).toBe(201);
    const replay = await post('/orders/slow', key, order(customer));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(done.body);
  });

  it('refuses 49 concurrent duplicates of one idempotent request with 409, running it once', async () => {
    const key = randomUUID();
    const customer = `rush-${randomUUID()}`;
    const before = shop.executions.of('order-slow');
    const first = post('/orders/slow', key, order(customer)).then((r) => r);
    await shop.gates.entered(`slow:${customer}`);
    const duplicates = await Promise.all(
      Array.from({ length: 49 }, () => post('/orders/slow', key, order(customer)).then((r) => r)),
    );
    shop.gates.open(`slow:${customer}`);
    expect((await first).status).toBe(201);
    expect(duplicates.map((r) => r.status)).toEqual(Array(49).fill(409));
    expect(shop.executions.of('order-slow')).toBe(before + 1);
  });

  it("answers 50 concurrent identical requests with one execution under onBusy: 'wait'", async () => {
    const key = randomUUID();
    const customer = `crowd-${randomUUID()}`;
    const before = shop.executions.of('order-slow-wait');
    const calls = Array.from({ length: 50 }, () =>
      post('/orders/slow-wait', key, order(customer)).then((r) => r),
    );
    await shop.gates.entered(`slow-wait:${customer}`);
    shop.gates.open(`slow-wait:${customer}`);
    const responses = await Promise.all(calls);
    expect(shop.executions.of('order-slow-wait')).toBe(before + 1);
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
  });

  it('isolates tenants: one key from two tenants runs twice and never replays across', async () => {
    const key = randomUUID();
    const before = shop.executions.of('order-create');
    const a = await post('/orders', key, order('iso'), 'tenant-a');
    const b = await post('/orders', key, order('iso'), 'tenant-b');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
    expect(shop.executions.of('order-create')).toBe(before + 2);
    const againA = await post('/orders', key, order('iso'), 'tenant-a');
    expect(againA.body.id).toBe(a.body.id);
    if (backend.ordersTable) expect(await backend.recordRows(key)).toBe(2);
  });

  it('keys ignore transport headers: trace ids and timestamps do not change the key', async () => {
    const key = randomUUID();
    const first = await post('/orders', key, order('transport'))
      .set('x-request-id', 'trace-1')
      .set('traceparent', '00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01')
      .set('x-sent-at', '2026-01-01T00:00:00Z');
    const second = await post('/orders', key, order('transport'))
      .set('x-request-id', 'trace-2')
      .set('traceparent', '00-cccccccccccccccccccccccccccccccc-dddddddddddddddd-01')
      .set('x-sent-at', '2026-02-02T10:10:10Z');
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it.each([200, 201, 204, 400, 404, 410, 422])('stores a %i and replays it', async (code) => {
    const key = randomUUID();
    const first = await post(`/statuses/${code}`, key, {});
    const second = await post(`/statuses/${code}`, key, {});
    expect(first.status).toBe(code);
    expect(second.status).toBe(code);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    expect(shop.executions.of(`status:${key}`)).toBe(1);
  });

  it.each([500, 502, 503, 408, 409, 425, 429])(
    'does not store a %i: the retry runs the handler again',
    async (code) => {
      const key = randomUUID();
      const first = await post(`/statuses/${code}`, key, {});
      const second = await post(`/statuses/${code}`, key, {});
      expect(first.status).toBe(code);
      expect(second.status).toBe(code);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.body).toEqual({ execution: 2 });
      if (backend.ordersTable) expect(await backend.recordRows(key)).toBe(0);
    },
  );

  it('does not store a thrown error: the app error handler answers, the retry runs again', async () => {
    const key = randomUUID();
    const first = await post('/throws', key, {});
    const second = await post('/throws', key, {});
    expect(first.status).toBe(400);
    expect(first.body.error).toBe('rejected on execution 1');
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('rejected on execution 2');
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store an error passed to next(error)', async () => {
    const key = randomUUID();
    const first = await post('/next-error', key, {});
    const second = await post('/next-error', key, {});
    expect(first.status).toBe(422);
    expect(first.body.error).toBe('passed on by execution 1');
    expect(second.body.error).toBe('passed on by execution 2');
    if (backend.ordersTable) expect(await backend.recordRows(key)).toBe(0);
  });

  it('replays a binary body byte for byte', async () => {
    const key = randomUUID();
    const first = await raw(post('/bytes', key, {}));
    const replay = await raw(post('/bytes', key, {}));
    expect(first.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toBe(first.headers['content-type']);
    expect((first.body as Buffer).length).toBe(4096);
    expect(Buffer.compare(replay.body as Buffer, first.body as Buffer)).toBe(0);
  });

  it('refuses a streamed response with a clear error instead of half-sending it', async () => {
    const key = randomUUID();
    const before = shop.errors.length;
    const first = await post('/stream', key, {});
    expect(first.status).toBe(500);
    const error = shop.errors[before];
    expect(error).toBeInstanceOf(UnsupportedResponseError);
    expect((error as Error).message).toContain('a streamed response');
    expect(first.text).not.toContain('part 1');
    // Nothing was kept: the retry runs again.
    await post('/stream', key, {});
    expect(shop.executions.of(`stream:${key}`)).toBe(2);
  });

  it('replays the default and allowlisted headers, never Set-Cookie or other headers', async () => {
    const key = randomUUID();
    const first = await post('/cookies', key, {});
    expect(first.headers['set-cookie']).toBeDefined();
    expect(first.headers['x-debug']).toBe('per-response');
    const replay = await post('/cookies', key, {});
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.etag).toBe('"v1"');
    expect(replay.headers['x-order-version']).toBe('7');
    expect(replay.headers['set-cookie']).toBeUndefined();
    expect(replay.headers['x-debug']).toBeUndefined();
    expect(replay.body).toEqual(first.body);
  });

  it('coalesces 50 concurrent identical SingleFlight requests into exactly one execution', async () => {
    const id = randomUUID();
    const calls = Array.from({ length: 50 }, () =>
      request(shop.app)
        .get(`/reports/${id}`)
        .set('x-tenant', 't-1')
        .then((r) => r),
    );
    await shop.gates.entered(`report:${id}`);
    shop.gates.open(`report:${id}`);
    const responses = await Promise.all(calls);
    expect(shop.executions.of(`report:${id}`)).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(responses.map((r) => r.body.renderedBy)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
  });

  it("refuses concurrent SingleFlight duplicates with 409 under onBusy: 'reject'", async () => {
    const id = randomUUID();
    const leader = request(shop.app)
      .get(`/reports/${id}/strict`)
      .set('x-tenant', 't-1')
      .then((r) => r);
    await shop.gates.entered(`strict:${id}`);
    const duplicates = await Promise.all(
      Array.from({ length: 10 }, () =>
        request(shop.app)
          .get(`/reports/${id}/strict`)
          .set('x-tenant', 't-1')
          .then((r) => r),
      ),
    );
    shop.gates.open(`strict:${id}`);
    expect((await leader).status).toBe(200);
    expect(duplicates.map((r) => r.status)).toEqual(Array(10).fill(409));
    expect(duplicates[0]?.headers['retry-after']).toBeDefined();
    expect(duplicates[0]?.body.type).toBe(ProblemType.requestInFlight);
    expect(shop.executions.of(`strict:${id}`)).toBe(1);
  });

  it('combines both middleware: different keys share one flight, each key replays its own record', async () => {
    const doc = randomUUID();
    const keys = Array.from({ length: 5 }, () => randomUUID());
    const calls = keys.map((key) =>
      post(`/summaries/${doc}`, key, { model: 'm-1' }).then((r) => r),
    );
    await shop.gates.entered(`summary:${doc}`);
    shop.gates.open(`summary:${doc}`);
    const responses = await Promise.all(calls);
    expect(shop.executions.of(`summary:${doc}`)).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(201));
    expect(new Set(responses.map((r) => r.body.summary)).size).toBe(1);

    const replay = await post(`/summaries/${doc}`, keys[2], { model: 'm-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(responses[2]?.body);
    const mismatch = await post(`/summaries/${doc}`, keys[2], { model: 'm-2' });
    expect(mismatch.status).toBe(422);
    expect(shop.executions.of(`summary:${doc}`)).toBe(1);
  });
});
