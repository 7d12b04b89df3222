import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { AppModule } from '../src/app.module.js';
import { configureApp } from '../src/app.setup.js';
import { OrdersService } from '../src/orders/orders.service.js';
import { Warehouse } from '../src/orders/warehouse.js';
import { HoldableWarehouse } from './holdable-warehouse.js';

const PROBLEM = /^application\/problem\+json(;|$)/;
const warehouse = new HoldableWarehouse();
let app: INestApplication;
let baseUrl: string;

before(async () => {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(Warehouse)
    .useValue(warehouse)
    .compile();
  app = configureApp(moduleRef.createNestApplication({ logger: ['error', 'warn'] }));
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
});

after(() => app.close());

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown>;
}

interface OrderRequest {
  readonly key: string;
  readonly body: object;
  readonly tenant?: string;
}

async function postOrder({ key, body, tenant = 'acme' }: OrderRequest): Promise<Answer> {
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

const placedFor = (cartId: string) => app.get(OrdersService).placedFor(cartId);

function order() {
  const cartId = `cart-${randomUUID()}`;
  return { key: `order-${randomUUID()}`, cartId, body: { cartId, qty: 2 } };
}

test('a retry of a completed request replays its status and body', async () => {
  const { key, cartId, body } = order();
  const first = await postOrder({ key, body });
  const retry = await postOrder({ key, body });

  assert.equal(first.status, 201);
  assert.equal(first.json.cartId, cartId);
  assert.equal(retry.status, 201);
  assert.equal(retry.text, first.text);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(placedFor(cartId), 1);
});

test('a retry while the first is in flight gets 409 with Retry-After', async () => {
  const { key, cartId, body } = order();
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
  assert.equal(placedFor(cartId), 1);
});

test('the key reused with another payload gets 422 problem+json', async () => {
  const { key, cartId, body } = order();
  assert.equal((await postOrder({ key, body })).status, 201);

  const reused = await postOrder({ key, body: { ...body, qty: 3 } });

  assert.equal(reused.status, 422);
  assert.match(reused.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(reused.json.type, 'urn:oncely:problem:payload-mismatch');
  assert.equal(placedFor(cartId), 1);
});

test('a user of no tenant gets 400 problem+json: the key field is missing', async () => {
  const { key, cartId, body } = order();

  const refused = await postOrder({ key, body, tenant: '' });

  assert.equal(refused.status, 400);
  assert.match(refused.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(refused.json.type, 'urn:oncely:problem:missing-key-field');
  assert.equal(placedFor(cartId), 0);
});

test("an invalid body is refused by the app's ValidationPipe settings before any key", async () => {
  const { key, cartId, body } = order();

  const refused = await postOrder({ key, body: { ...body, coupon: 'FREE' } });

  assert.equal(refused.status, 400);
  assert.match(refused.headers.get('content-type') ?? '', PROBLEM);
  assert.equal(refused.json.type, 'urn:oncely:problem:invalid-body');
  assert.equal((await postOrder({ key, body })).status, 201);
  assert.equal(placedFor(cartId), 1);
});

test('10 concurrent duplicates run the handler once', async () => {
  const { key, cartId, body } = order();
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
  assert.equal(placedFor(cartId), 1);
});
