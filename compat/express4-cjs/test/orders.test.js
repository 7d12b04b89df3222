'use strict';
const { randomUUID } = require('node:crypto');
const request = require('supertest');
const { createApp } = require('../src/app');
const { HoldableWarehouse } = require('./holdable-warehouse');

const PROBLEM = /^application\/problem\+json(;|$)/;
const warehouse = new HoldableWarehouse();
const { app, oncely, orders, invoices } = createApp({ warehouse });
let server;

beforeAll(async () => {
  await oncely.start();
  server = app.listen(0, '127.0.0.1');
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await oncely.close();
});

function post(path, { key, body, tenant = 'acme' }) {
  const req = request(server).post(path).set('x-user-id', 'user-1').set('idempotency-key', key);
  if (tenant) req.set('x-tenant-id', tenant);
  return body ? req.send(body) : req;
}

/** Lets Promise.all run the requests together: a supertest request only starts on `then`. */
const send = (req) => Promise.resolve(req);
const problemOf = (res) => JSON.parse(res.text);
const placedFor = (cartId) => orders.filter((order) => order.cartId === cartId).length;

function newOrder() {
  const cartId = `cart-${randomUUID()}`;
  return { key: `order-${randomUUID()}`, cartId, body: { cartId, qty: 2 } };
}

test('a retry of a completed request replays its status and body', async () => {
  const { key, cartId, body } = newOrder();
  const first = await post('/orders', { key, body });
  const retry = await post('/orders', { key, body });

  expect(first.status).toBe(201);
  expect(first.body.cartId).toBe(cartId);
  expect(retry.status).toBe(201);
  expect(retry.text).toBe(first.text);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(placedFor(cartId)).toBe(1);
});

test('a response written with res.write and res.end is kept whole and replayed byte for byte', async () => {
  const orderId = randomUUID();
  const key = `invoice-${randomUUID()}`;
  const first = await post(`/orders/${orderId}/invoice`, { key });
  const retry = await post(`/orders/${orderId}/invoice`, { key });

  expect(first.status).toBe(201);
  expect(first.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(first.text).toMatch(new RegExp(`^Invoice \\d+\\nOrder ${orderId}\\nIssued `));
  expect(retry.status).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(retry.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(retry.text).toBe(first.text);
  expect(invoices.filter((invoice) => invoice.orderId === orderId)).toHaveLength(1);
});

test('a retry while the first is in flight gets 409 with Retry-After', async () => {
  const { key, cartId, body } = newOrder();
  const hold = warehouse.hold();
  const first = send(post('/orders', { key, body }));
  await hold.reached;

  const retry = await post('/orders', { key, body });
  hold.release();

  expect(retry.status).toBe(409);
  expect(retry.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(retry.headers['content-type']).toMatch(PROBLEM);
  expect(problemOf(retry).type).toBe('urn:oncely:problem:request-in-flight');
  expect((await first).status).toBe(201);
  expect(placedFor(cartId)).toBe(1);
});

test('the key reused with another payload gets 422 problem+json', async () => {
  const { key, cartId, body } = newOrder();
  expect((await post('/orders', { key, body })).status).toBe(201);

  const reused = await post('/orders', { key, body: { ...body, qty: 3 } });

  expect(reused.status).toBe(422);
  expect(reused.headers['content-type']).toMatch(PROBLEM);
  expect(problemOf(reused).type).toBe('urn:oncely:problem:payload-mismatch');
  expect(placedFor(cartId)).toBe(1);
});

test('a user of no tenant gets 400 problem+json: the key field is missing', async () => {
  const { key, cartId, body } = newOrder();

  const refused = await post('/orders', { key, body, tenant: '' });

  expect(refused.status).toBe(400);
  expect(refused.headers['content-type']).toMatch(PROBLEM);
  expect(problemOf(refused).type).toBe('urn:oncely:problem:missing-key-field');
  expect(placedFor(cartId)).toBe(0);
});

test('10 concurrent duplicates run the handler once', async () => {
  const { key, cartId, body } = newOrder();
  const hold = warehouse.hold();
  let answered = 0;
  const duplicates = Array.from({ length: 10 }, () =>
    send(post('/orders', { key, body })).finally(() => (answered += 1)),
  );
  await hold.reached;
  // The nine refused while the first holds the key, then the first may finish.
  while (answered < 9) await new Promise((resolve) => setTimeout(resolve, 10));
  hold.release();
  const answers = await Promise.all(duplicates);

  const statuses = answers.map((answer) => answer.status).sort();
  expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  expect(placedFor(cartId)).toBe(1);
});
