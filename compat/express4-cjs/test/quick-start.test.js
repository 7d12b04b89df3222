'use strict';
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { once } = require('node:events');
const { createServer } = require('node:net');

/** The README's Express quick start, started as `node src/quick-start.js` on a free port. */
let child;
let baseUrl;

beforeAll(async () => {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  child = spawn(process.execPath, ['src/quick-start.js'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await once(child.stdout, 'data');
  expect(String(line)).toBe(`Listening on port ${port}\n`);
  baseUrl = `http://127.0.0.1:${port}`;
});

const order = (key, qty) =>
  fetch(`${baseUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tenant-id': 'acme', 'idempotency-key': key },
    body: JSON.stringify({ cartId: 'cart-77', qty }),
  });

test('the quick start answers 201 and a retry with the kept response', async () => {
  const key = randomUUID();
  const first = await order(key, 2);
  const body = await first.json();
  expect(first.status).toBe(201);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(body).toEqual({ orderId: expect.any(String), cartId: 'cart-77', qty: 2 });

  const retry = await order(key, 2);
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(await retry.json()).toEqual(body);
});

test('the quick start answers the same key with another payload 422', async () => {
  const key = randomUUID();
  expect((await order(key, 1)).status).toBe(201);
  const reused = await order(key, 3);
  expect(reused.status).toBe(422);
  expect(reused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect((await reused.json()).type).toBe('urn:oncely:problem:payload-mismatch');
});

test('the quick start exits 0 on SIGTERM, once oncely has closed', async () => {
  child.kill('SIGTERM');
  expect(await once(child, 'exit')).toEqual([0, null]);
});
