import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';

/** The README's Express quick start, started as `node src/quick-start.js` on a free port. */
let child;
let baseUrl;

before(async () => {
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
  assert.deepEqual(printed, [
    'oncely: flight coordinator in-memory (this process only)',
    'oncely: record store in-memory (this process only)',
    `Listening on port ${port}`,
  ]);
  baseUrl = `http://127.0.0.1:${port}`;
});

// A failed start must not leave the server running, which would keep the runner waiting.
after(() => child?.kill());

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
  assert.equal(first.status, 201);
  assert.equal(first.headers.get('idempotent-replayed'), null);
  assert.deepEqual(Object.keys(body), ['orderId', 'cartId', 'qty']);
  assert.deepEqual({ ...body, orderId: 'id' }, { orderId: 'id', cartId: 'cart-77', qty: 2 });

  const retry = await order(key, 2);
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await retry.json(), body);
});

test('the quick start answers the same key with another payload 422', async () => {
  const key = randomUUID();
  assert.equal((await order(key, 1)).status, 201);
  const reused = await order(key, 3);
  assert.equal(reused.status, 422);
  assert.match(reused.headers.get('content-type'), /^application\/problem\+json/);
  assert.equal((await reused.json()).type, 'urn:oncely:problem:payload-mismatch');
});

test('the quick start exits 0 on SIGTERM, once oncely has closed', async () => {
  child.kill('SIGTERM');
  assert.deepEqual(await once(child, 'exit'), [0, null]);
});
