import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createApp } from '../src/app.js';
import { createDataSource } from '../src/data-source.js';
import { Order } from '../src/order.entity.js';
import { ensureDatabase } from './database.js';
import { HoldableWarehouse } from './holdable-warehouse.js';

const PROBLEM = /^application\/problem\+json(;|$)/;
const warehouse = new HoldableWarehouse();
let dataSource;
let oncely;
let server;
let baseUrl;

before(async () => {
  dataSource = await createDataSource(await ensureDatabase('oncely_compat_express5')).initialize();
  const shop = createApp({ dataSource, warehouse });
  oncely = shop.oncely;
  await oncely.start();
  server = shop.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await oncely.close();
  await dataSource.destroy();
});

async function postOrder({ key, body, tenant = 'acme' }) {
  const response = await fetch(`${baseUrl}/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': key,
      'x-user-id': 'user-1',
      ...(tenant ? { 'x-tenant-id': tenant } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
}

/** Order rows committed for one cart: how many times the route really ran for it. */
const placedFor = (cartId) => dataSource.getRepository(Order).countBy({ cartId });

function newOrder() {
  const cartId = `cart-${randomUUID()}`;
  return { key: `order-${randomUUID()}`, cartId, body: { cartId, qty: 2 } };
}

test('a retry of a completed request replays its status and body', async () => {
  const { key, cartId, body } = newOrder();
  const first = await postOrder({ key, body });
  const retry = await postOrder({ key, body });

  assert.equal(first.status, 201);
  assert.equal(first.json.cartId, cartId);
  assert.equal(retry.status, 201);
  assert.equal(retry.text, first.text);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(await placedFor(cartId), 1);
});

test('a retry while the first is in flight gets 409 with Retry-After', async () => {
  const { key, cartId, body } = newOrder();
  const hold = warehouse.hold();
  const first = postOrder({ key, body });
  await hold.reached;

  const retry = await postOrder({ key, body });
  hold.release();

  assert.equal(retry.status, 409);
  assert.match(retry.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.match(retry.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(retry.json.type, 'urn:oncely:problem:request-in-flight');
  assert.equal((await first).status, 201);
  assert.equal(await placedFor(cartId), 1);
});

test('the key reused with another payload gets 422 problem+json', async () => {
  const { key, cartId, body } = newOrder();
  assert.equal((await postOrder({ key, body })).status, 201);

  const reused = await postOrder({ key, body: { ...body, qty: 3 } });

  assert.equal(reused.status, 422);
  assert.match(reused.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(reused.json.type, 'urn:oncely:problem:payload-mismatch');
  assert.equal(await placedFor(cartId), 1);
});

test('a user of no tenant gets 400 problem+json: the key field is missing', async () => {
  const { key, cartId, body } = newOrder();

  const refused = await postOrder({ key, body, tenant: '' });

  assert.equal(refused.status, 400);
  assert.match(refused.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(refused.json.type, 'urn:oncely:problem:missing-key-field');
  assert.equal(await placedFor(cartId), 0);
});

test('10 concurrent duplicates run the handler once', async () => {
  const { key, cartId, body } = newOrder();
  const hold = warehouse.hold();
  let answered = 0;
  const duplicates = Array.from({ length: 10 }, () =>
    postOrder({ key, body }).finally(() => (answered += 1)),
  );
  await hold.reached;
  // The nine refused while the first holds the key, then the first may finish.
  while (answered < 9) await new Promise((resolve) => setTimeout(resolve, 10));
  hold.release();
  const answers = await Promise.all(duplicates);

  const statuses = answers.map((answer) => answer.status).sort();
  assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  assert.equal(await placedFor(cartId), 1);
});
