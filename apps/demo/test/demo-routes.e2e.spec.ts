import { jest } from '@jest/globals';
import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import { DemoProblemType } from '../src/problems/problem.exception.js';
import { ExecutionStats } from '../src/stats/execution-stats.service.js';
import { EmbeddedBackend, RedisPostgresBackend, type DemoBackend } from './support/demo-backend.js';
import { get, post, until, type DemoResponse } from './support/demo-client.js';

// Jest ignores a per-project testTimeout; two backends start here and some requests run for seconds.
jest.setTimeout(60_000);

const PROBLEM_JSON = 'application/problem+json';

const order = (cartId: string, qty = 1) => ({ cartId, items: [{ sku: 'sku-1', qty }] });
const payment = (paymentRequestNo: string, amount = '100.00') => ({
  paymentRequestNo,
  orderId: 'order-1001',
  amount,
  currency: 'EUR',
});
const report = (run: string, to = '2026-01-07') => ({
  reportType: 'sales',
  from: '2026-01-01',
  to,
  filters: { run },
});
const summaryBody = (content: string, extra: Record<string, unknown> = {}) => ({
  content,
  model: 'summarizer-small',
  language: 'en',
  promptVersion: 'p3',
  ...extra,
});

function expectProblem(response: DemoResponse, status: number, type: string): void {
  expect({ status: response.status, type: response.body?.type }).toEqual({ status, type });
  expect(response.headers.get('content-type')).toContain(PROBLEM_JSON);
  expect(response.body.status).toBe(status);
  expect(typeof response.body.title).toBe('string');
  expect(typeof response.body.detail).toBe('string');
}

function distinctExecutionIds(responses: readonly DemoResponse[]): number {
  return new Set(responses.map((r) => r.body?.executionId).filter(Boolean)).size;
}

describe.each([
  ['embedded', () => new EmbeddedBackend()],
  ['redis-postgres', () => new RedisPostgresBackend()],
] as const)('demo routes on %s', (_name, createBackend) => {
  const backend: DemoBackend = createBackend();
  /** Spreads requests over the nodes, so duplicates reach every node of the backend. */
  const node = (i = 0) => backend.urls[i % backend.urls.length]!;
  const totalExecutions = () =>
    ['order-create', 'payment-submit', 'report-export', 'document-summary']
      .map((operation) => backend.executions(operation))
      .reduce((a, b) => a + b, 0);

  beforeAll(async () => {
    await backend.start();
  });

  afterAll(async () => {
    await backend.stop();
  });

  describe('identity headers', () => {
    it.each([
      ['/orders', order('cart-x')],
      ['/payments', payment('PR-x')],
      ['/reports/export', report('x')],
      ['/documents/doc-1/summary', summaryBody('Text.')],
    ])(
      'POST %s without X-Tenant-Id is a 401 problem, before any key or execution',
      async (path, body) => {
        const before = totalExecutions();
        const response = await post(node(), path, body, {
          tenant: null,
          idempotencyKey: randomUUID(),
        });
        expectProblem(response, 401, DemoProblemType.tenantMissing);
        expect(totalExecutions()).toBe(before);
      },
    );

    it('refuses an X-Simulate-Latency-Ms above 10000 with a 400 problem', async () => {
      const response = await post(node(), '/reports/export', report(randomUUID()), {
        latencyMs: 10_001,
      });
      expectProblem(response, 400, DemoProblemType.invalidHeader);
    });
  });

  describe('POST /orders (Idempotency-Key required, transactional)', () => {
    it('creates an order, then replays it for a retry with the same key', async () => {
      const key = randomUUID();
      const cartId = `cart-${randomUUID()}`;
      const first = await post(node(0), '/orders', order(cartId), {
        idempotencyKey: key,
        latencyMs: 0,
      });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ cartId, items: [{ sku: 'sku-1', qty: 1 }] });
      expect(first.body.executionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      const retry = await post(node(1), '/orders', order(cartId), {
        idempotencyKey: key,
        latencyMs: 0,
      });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await backend.countRows('demo_order', 'cart_id', cartId)).toBe(1);
    });

    it('runs 10 concurrent duplicates once: one executionId, one row, the rest 409 or replayed', async () => {
      const key = randomUUID();
      const cartId = `cart-${randomUUID()}`;
      const before = backend.executions('order-create');
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(node(i), '/orders', order(cartId), { idempotencyKey: key, latencyMs: 500 }),
        ),
      );
      expect(backend.executions('order-create') - before).toBe(1);
      expect(await backend.countRows('demo_order', 'cart_id', cartId)).toBe(1);
      const created = responses.filter((r) => r.status === 201);
      const conflicts = responses.filter((r) => r.status === 409);
      expect(created.length + conflicts.length).toBe(10);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(distinctExecutionIds(created)).toBe(1);
      for (const conflict of conflicts) expectProblem(conflict, 409, ProblemType.requestInFlight);
    });

    it('answers 409 with Retry-After while the same key is in flight, then replays its outcome', async () => {
      const key = randomUUID();
      const cartId = `cart-${randomUUID()}`;
      const before = backend.executions('order-create');
      const first = post(node(0), '/orders', order(cartId), {
        idempotencyKey: key,
        latencyMs: 4000,
      });
      await until(() => backend.executions('order-create') > before, 'the first order to start');
      const duplicate = await post(node(1), '/orders', order(cartId), { idempotencyKey: key });
      expectProblem(duplicate, 409, ProblemType.requestInFlight);
      expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const created = await first;
      expect(created.status).toBe(201);
      const replay = await post(node(1), '/orders', order(cartId), { idempotencyKey: key });
      expect(replay.body.executionId).toBe(created.body.executionId);
      expect(backend.executions('order-create') - before).toBe(1);
    });

    it('answers 422 for the same key with another payload, keeping the first order', async () => {
      const key = randomUUID();
      const cartId = `cart-${randomUUID()}`;
      const first = await post(node(0), '/orders', order(cartId, 1), {
        idempotencyKey: key,
        latencyMs: 0,
      });
      const other = await post(node(1), '/orders', order(cartId, 2), { idempotencyKey: key });
      expectProblem(other, 422, ProblemType.payloadMismatch);
      const retry = await post(node(0), '/orders', order(cartId, 1), { idempotencyKey: key });
      expect(retry.body).toEqual(first.body);
      expect(await backend.countRows('demo_order', 'cart_id', cartId)).toBe(1);
    });

    it('lets the orders table’s unique constraint refuse the same cart under another key (409)', async () => {
      const cartId = `cart-${randomUUID()}`;
      const first = await post(node(0), '/orders', order(cartId), {
        idempotencyKey: randomUUID(),
        latencyMs: 0,
      });
      expect(first.status).toBe(201);
      const second = await post(node(1), '/orders', order(cartId), {
        idempotencyKey: randomUUID(),
        latencyMs: 0,
      });
      expectProblem(second, 409, DemoProblemType.cartAlreadyOrdered);
      expect(await backend.countRows('demo_order', 'cart_id', cartId)).toBe(1);
    });

    it('scopes the client key by tenant: one key on two tenants is two orders', async () => {
      const key = randomUUID();
      const a = await post(node(0), '/orders', order(`cart-${randomUUID()}`), {
        idempotencyKey: key,
        tenant: 'tenant-a',
        latencyMs: 0,
      });
      const b = await post(node(1), '/orders', order(`cart-${randomUUID()}`), {
        idempotencyKey: key,
        tenant: 'tenant-b',
        latencyMs: 0,
      });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.body.executionId).not.toBe(a.body.executionId);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
    });

    it('answers 400 without the key, with a malformed key, and for an invalid body, executing nothing', async () => {
      const before = backend.executions('order-create');
      const cartId = `cart-${randomUUID()}`;
      expectProblem(
        await post(node(), '/orders', order(cartId)),
        400,
        ProblemType.idempotencyKeyMissing,
      );
      expectProblem(
        await post(node(), '/orders', order(cartId), { idempotencyKey: 'two words' }),
        400,
        ProblemType.idempotencyKeyMalformed,
      );
      const invalid = await post(
        node(),
        '/orders',
        { cartId, items: [] },
        { idempotencyKey: randomUUID() },
      );
      expectProblem(invalid, 400, ProblemType.invalidBody);
      expect(invalid.body.errors).toEqual([{ property: 'items', messages: expect.any(Array) }]);
      const badQty = await post(node(), '/orders', order(cartId, 0), {
        idempotencyKey: randomUUID(),
      });
      expectProblem(badQty, 400, ProblemType.invalidBody);
      expect(badQty.body.errors[0].property).toBe('items.0.qty');
      expect(backend.executions('order-create')).toBe(before);
    });
  });

  describe('POST /payments (key built on the server, header optional)', () => {
    it('runs 10 concurrent duplicates once; every caller waits for the one payment', async () => {
      const requestNo = `PR-${randomUUID().slice(0, 12)}`;
      const before = backend.executions('payment-submit');
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(node(i), '/payments', payment(requestNo), { latencyMs: 500 }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(distinctExecutionIds(responses)).toBe(1);
      expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(
        9,
      );
      expect(backend.executions('payment-submit') - before).toBe(1);
      expect(await backend.countRows('demo_payment', 'payment_request_no', requestNo)).toBe(1);
      expect(responses[0]!.body).toMatchObject({
        status: 'succeeded',
        amount: '100.00',
        currency: 'EUR',
      });
    });

    it('replays a retry without any header, and answers 422 for the same request number with another amount', async () => {
      const requestNo = `PR-${randomUUID().slice(0, 12)}`;
      const first = await post(node(0), '/payments', payment(requestNo), { latencyMs: 0 });
      expect(first.status).toBe(201);
      const retry = await post(node(1), '/payments', payment(requestNo), { latencyMs: 0 });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      expectProblem(
        await post(node(1), '/payments', payment(requestNo, '100.01')),
        422,
        ProblemType.payloadMismatch,
      );
      // Decimal strings are hashed exactly: "100.0" is not "100.00" (and is refused by validation).
      expectProblem(
        await post(node(0), '/payments', payment(requestNo, '100.0')),
        400,
        ProblemType.invalidBody,
      );
      expect(await backend.countRows('demo_payment', 'payment_request_no', requestNo)).toBe(1);
    });

    it('lets the payments table’s unique constraint refuse the request number under a new client key (409)', async () => {
      const requestNo = `PR-${randomUUID().slice(0, 12)}`;
      expect((await post(node(0), '/payments', payment(requestNo), { latencyMs: 0 })).status).toBe(
        201,
      );
      const again = await post(node(1), '/payments', payment(requestNo), {
        idempotencyKey: randomUUID(),
        latencyMs: 0,
      });
      expectProblem(again, 409, DemoProblemType.paymentRequestUsed);
      expect(await backend.countRows('demo_payment', 'payment_request_no', requestNo)).toBe(1);
    });

    it('answers 400 for a malformed Idempotency-Key and an invalid currency', async () => {
      const requestNo = `PR-${randomUUID().slice(0, 12)}`;
      expectProblem(
        await post(node(), '/payments', payment(requestNo), { idempotencyKey: '"unterminated' }),
        400,
        ProblemType.idempotencyKeyMalformed,
      );
      const invalid = await post(node(), '/payments', { ...payment(requestNo), currency: 'eur' });
      expectProblem(invalid, 400, ProblemType.invalidBody);
      expect(invalid.body.errors[0].property).toBe('currency');
    });
  });

  describe('POST /reports/export (SingleFlight, cached 10 min)', () => {
    it('runs 10 concurrent identical exports once and caches the result; latency is not part of the key', async () => {
      const run = randomUUID();
      const before = backend.executions('report-export');
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(node(i), '/reports/export', report(run), { latencyMs: 500 }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(distinctExecutionIds(responses)).toBe(1);
      expect(responses[0]!.body.rows).toHaveLength(7);
      const later = await post(node(1), '/reports/export', report(run), { latencyMs: 0 });
      expect(later.body.executionId).toBe(responses[0]!.body.executionId);
      expect(backend.executions('report-export') - before).toBe(1);

      const otherRange = await post(node(0), '/reports/export', report(run, '2026-01-08'), {
        latencyMs: 0,
      });
      expect(otherRange.body.executionId).not.toBe(responses[0]!.body.executionId);
      expect(otherRange.body.rows).toHaveLength(8);
      expect(backend.executions('report-export') - before).toBe(2);
    });

    it('keeps tenants apart: the same export for another tenant runs again', async () => {
      const run = randomUUID();
      const a = await post(node(0), '/reports/export', report(run), {
        tenant: 'tenant-a',
        latencyMs: 0,
      });
      const b = await post(node(0), '/reports/export', report(run), {
        tenant: 'tenant-b',
        latencyMs: 0,
      });
      expect(b.body.executionId).not.toBe(a.body.executionId);
    });

    it('answers 400 for an inverted date range, executing nothing', async () => {
      const before = backend.executions('report-export');
      const response = await post(node(), '/reports/export', {
        ...report(randomUUID()),
        from: '2026-02-01',
      });
      expectProblem(response, 400, ProblemType.invalidBody);
      expect(response.body.errors[0].property).toBe('to');
      expect(backend.executions('report-export')).toBe(before);
    });
  });

  describe('POST /documents/:docId/summary (SingleFlight + IdempotentKey, header optional)', () => {
    it('runs 10 concurrent duplicates once; a later one with another clientSentAt replays it', async () => {
      const docId = `doc-${randomUUID().slice(0, 8)}`;
      const content = `Oncely stops duplicates ${randomUUID()}. It runs the work once. Then it replays.`;
      const before = backend.executions('document-summary');
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(
            node(i),
            `/documents/${docId}/summary`,
            summaryBody(content, { clientSentAt: `2026-01-01T10:00:0${i}Z` }),
            {
              latencyMs: 500,
            },
          ),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(distinctExecutionIds(responses)).toBe(1);
      expect(responses[0]!.body).toMatchObject({
        docId,
        summary: expect.stringContaining('Oncely stops duplicates'),
      });

      const later = await post(
        node(1),
        `/documents/${docId}/summary`,
        summaryBody(content, { clientSentAt: '2026-05-05T00:00:00Z' }),
      );
      expect(later.status).toBe(200);
      expect(later.body.executionId).toBe(responses[0]!.body.executionId);
      expect(backend.executions('document-summary') - before).toBe(1);
    });

    it('treats another prompt version or another text as new work, never as a 422', async () => {
      const docId = `doc-${randomUUID().slice(0, 8)}`;
      const first = await post(node(0), `/documents/${docId}/summary`, summaryBody('First text.'), {
        latencyMs: 0,
      });
      const newPrompt = await post(
        node(1),
        `/documents/${docId}/summary`,
        summaryBody('First text.', { promptVersion: 'p4' }),
        { latencyMs: 0 },
      );
      const newText = await post(
        node(0),
        `/documents/${docId}/summary`,
        summaryBody('Second text.'),
        { latencyMs: 0 },
      );
      expect([first.status, newPrompt.status, newText.status]).toEqual([200, 200, 200]);
      expect(distinctExecutionIds([first, newPrompt, newText])).toBe(3);
    });

    it('replays by client key; another key for the same input shares the cached flight; a malformed key is a 400', async () => {
      const docId = `doc-${randomUUID().slice(0, 8)}`;
      const key = randomUUID();
      const before = backend.executions('document-summary');
      const first = await post(node(0), `/documents/${docId}/summary`, summaryBody('Keyed text.'), {
        idempotencyKey: key,
        latencyMs: 0,
      });
      const retry = await post(node(1), `/documents/${docId}/summary`, summaryBody('Keyed text.'), {
        idempotencyKey: key,
      });
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.executionId).toBe(first.body.executionId);
      const otherKey = await post(
        node(0),
        `/documents/${docId}/summary`,
        summaryBody('Keyed text.'),
        {
          idempotencyKey: randomUUID(),
          latencyMs: 0,
        },
      );
      // A new record, but the SingleFlight key has no client key: its cached result is reused.
      expect(otherKey.status).toBe(200);
      expect(otherKey.headers.get('idempotent-replayed')).toBeNull();
      expect(otherKey.body.executionId).toBe(first.body.executionId);
      expect(backend.executions('document-summary') - before).toBe(1);
      expectProblem(
        await post(node(0), `/documents/${docId}/summary`, summaryBody('Keyed text.'), {
          idempotencyKey: 'bad key',
        }),
        400,
        ProblemType.idempotencyKeyMalformed,
      );
    });

    it('answers 400 for an invalid language tag', async () => {
      const response = await post(
        node(),
        '/documents/doc-1/summary',
        summaryBody('Text.', { language: 'English' }),
      );
      expectProblem(response, 400, ProblemType.invalidBody);
      expect(response.body.errors[0].property).toBe('language');
    });
  });

  describe('service routes', () => {
    it('GET /stats counts executions per operation in this process', async () => {
      for (const [i, app] of backend.apps.entries()) {
        const response = await get(backend.urls[i]!, '/stats');
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          pid: process.pid,
          executions: app.get(ExecutionStats).snapshot(),
        });
      }
      const summed = await Promise.all(backend.urls.map((url) => get(url, '/stats')));
      const orders = summed.map((r) => r.body.executions['order-create'] ?? 0);
      expect(orders.reduce((a: number, b: number) => a + b, 0)).toBe(
        backend.executions('order-create'),
      );
      expect(backend.executions('order-create')).toBeGreaterThan(0);
    });

    it('GET /health is 200 once the stores answer', async () => {
      for (const url of backend.urls) {
        const response = await get(url, '/health');
        expect(response.status).toBe(200);
        expect(response.body.status).toBe('ok');
      }
    });

    it('serves the page at / and the OpenAPI document with the headers and problem responses', async () => {
      const page = await get(node(), '/');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.body).toContain('data-testid="send-ten"');
      const openApi = await get(node(), '/docs-json');
      const createOrder = openApi.body.paths['/orders'].post;
      expect(createOrder.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining([
          'X-Tenant-Id',
          'X-User-Id',
          'X-Simulate-Latency-Ms',
          'Idempotency-Key',
        ]),
      );
      expect(Object.keys(createOrder.responses)).toEqual(
        expect.arrayContaining(['201', '400', '401', '409', '422']),
      );
      expect(createOrder.responses['422'].content).toHaveProperty(['application/problem+json']);
    });
  });
});
