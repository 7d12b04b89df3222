'use strict';
const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { once } = require('node:events');
const { createServer } = require('node:net');
const { createInterface } = require('node:readline');

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
  // oncely names what it runs on before the app says it listens; a child that exits ends the loop.
  const printed = [];
  for await (const line of createInterface({ input: child.stdout })) {
    printed.push(line);
    if (line.startsWith('Listening')) break;
  }
  expect(printed).toEqual([
    'oncely: flight coordinator in-memory (this process only)',
    'oncely: record store in-memory (this process only)',
    `Listening on port ${port}`,
  ]);
  baseUrl = `http://127.0.0.1:${port}`;
});

// A failed start must not leave the server running, which would keep the runner waiting.
afterAll(() => child?.kill());

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
