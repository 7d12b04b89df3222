import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { redisPostgresBackend } from './fixtures/backends.js';
import { createShopApp, type ShopApp } from './fixtures/shop.app.js';

const order = (customer: string) => ({ customer, lines: [{ sku: 'sku-1', quantity: 1 }] });

describe('two Express nodes on one Redis and one PostgreSQL', () => {
  const backend = redisPostgresBackend();
  let a: ShopApp;
  let b: ShopApp;
  const post = (node: ShopApp, path: string, key: string, body: object, tenant = 't-1') =>
    request(node.app)
      .post(path)
      .set('x-tenant', tenant)
      .set('idempotency-key', key)
      .send(body)
      .then((r) => r);
  const executions = (name: string) => a.executions.of(name) + b.executions.of(name);

  beforeAll(async () => {
    await backend.start();
    const table = backend.ordersTable!;
    a = createShopApp(await backend.oncely(), { ordersTable: table });
    b = createShopApp(await backend.oncely(), { ordersTable: table });
  });

  afterAll(async () => {
    await backend.stop();
  });

  it('replays on one node what the other executed, and refuses another payload with 422', async () => {
    const key = randomUUID();
    const first = await post(a, '/orders', key, order('cross'));
    const replay = await post(b, '/orders', key, order('cross'));
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(executions('order-create')).toBe(1);
    const other = await post(b, '/orders', key, order('another'));
    expect(other.status).toBe(422);
    expect(await backend.recordRows(key)).toBe(1);
  });

  it('refuses an in-flight duplicate on the other node with 409', async () => {
    const key = randomUUID();
    const customer = `lease-${randomUUID()}`;
    const first = post(a, '/orders/slow', key, order(customer));
    await a.gates.entered(`slow:${customer}`);
    const duplicate = await post(b, '/orders/slow', key, order(customer));
    expect(duplicate.status).toBe(409);
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    a.gates.open(`slow:${customer}`);
    expect((await first).status).toBe(201);
    expect(executions('order-slow')).toBe(1);
  });

  it('runs 50 concurrent identical SingleFlight requests on two nodes exactly once', async () => {
    const id = randomUUID();
    const calls = Array.from({ length: 50 }, (_, i) =>
      request((i % 2 ? a : b).app)
        .get(`/reports/${id}`)
        .set('x-tenant', 't-1')
        .then((r) => r),
    );
    const gate = `report:${id}`;
    await Promise.race([a.gates.entered(gate), b.gates.entered(gate)]);
    a.gates.open(gate);
    b.gates.open(gate);
    const responses = await Promise.all(calls);
    expect(executions(gate)).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(responses.map((r) => r.body.renderedBy)).size).toBe(1);
  });

  it('transactional: 20 concurrent duplicates on two nodes write exactly one order row', async () => {
    const key = randomUUID();
    const customer = `tx-${randomUUID().slice(0, 8)}`;
    const before = executions('tx-order');
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 ? a : b, '/tx-orders', key, order(customer))),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((r) => r.body.orderId)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await backend.orderRows(customer)).toBe(1);
    expect(executions('tx-order')).toBe(before + 1);
    expect(await backend.recordRows(key)).toBe(1);
  });

  it('isolates tenants on two nodes: one key from two tenants runs twice', async () => {
    const key = randomUUID();
    const x = await post(a, '/orders', key, order('iso'), 'tenant-a');
    const y = await post(b, '/orders', key, order('iso'), 'tenant-b');
    expect(y.headers['idempotent-replayed']).toBeUndefined();
    expect(y.body.id).not.toBe(x.body.id);
    expect(await backend.recordRows(key)).toBe(2);
  });
});
