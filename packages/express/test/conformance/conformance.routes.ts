import type { Oncely } from '@oncely/express';
import { CONFORMANCE_SECRET, type ConformanceProbe } from '@oncely/core/testing';
import type { Router } from 'express';
import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  handler,
  HttpError,
  UserView,
  validateOrder,
  validatePay,
  validateUser,
  type AuthedRequest,
} from './app-layers.js';

const scope = 'user.tenantId';
const tenantOf = (req: AuthedRequest) => (req.user as { tenantId?: unknown }).tenantId;

/** The fixture contract's routes (see `HttpConformanceHarness`), on any Express major. */
export function mountConformanceRoutes(app: Router, oncely: Oncely, probe: ConformanceProbe): void {
  const order = { scope, validate: validateOrder };

  app.post(
    '/orders',
    oncely.idempotent({ ...order, operation: 'order-create', name: 'POST /orders' }),
    handler((req, res) => {
      const execution = probe.hit('order-create');
      const body = req.body as ReturnType<typeof validateOrder>;
      res
        .status(201)
        .location('/orders/latest')
        .json({ id: randomUUID(), execution, customer: body.customer, lines: body.lines.length });
    }),
  );
  app.post(
    '/orders/slow',
    oncely.idempotent({ ...order, operation: 'order-slow' }),
    handler(async (req, res) => {
      const execution = probe.hit('order-slow');
      await probe.pass(`slow:${(req.body as { customer: string }).customer}`);
      res.status(201).json({ id: randomUUID(), execution });
    }),
  );
  app.post(
    '/orders/slow-wait',
    oncely.idempotent({ ...order, operation: 'order-slow-wait', onBusy: 'wait', wait: 30_000 }),
    handler(async (req, res) => {
      const execution = probe.hit('order-slow-wait');
      await probe.pass(`slow-wait:${(req.body as { customer: string }).customer}`);
      res.status(201).json({ id: randomUUID(), execution });
    }),
  );
  app.post(
    '/orders/payments',
    oncely.idempotent({
      ...order,
      operation: 'payment',
      idempotencyKey: 'ignored',
      target: 'body.customer',
      missingUserStatus: 401,
    }),
    handler((req, res) => {
      res.status(200).json({
        paid: probe.hit('payment'),
        customer: (req.body as { customer: string }).customer,
      });
    }),
  );
  app.post(
    '/statuses/:code',
    oncely.idempotent({ operation: 'status', scope, target: 'params.code' }),
    handler((req, res) => {
      const code = Number(req.params.code);
      res.status(code).json({ execution: probe.hit(`status:${code}`) });
    }),
  );
  app.post(
    '/flaky',
    oncely.idempotent({ operation: 'flaky', scope }),
    handler((_req, res) => {
      const execution = probe.hit('flaky');
      if (execution === 1) throw new HttpError(500, { message: 'first attempt fails' });
      res.status(201).json({ execution });
    }),
  );
  app.post(
    '/rejected',
    oncely.idempotent({ operation: 'rejected', scope }),
    handler(() => {
      throw new HttpError(400, { message: 'out of stock', execution: probe.hit('rejected') });
    }),
  );
  app.post(
    '/big',
    oncely.idempotent({ operation: 'big', scope, maxResponseBytes: 64 }),
    handler((_req, res) => {
      probe.hit('big');
      res.status(201).json({ padding: 'x'.repeat(200) });
    }),
  );
  for (const [version, status] of [
    [1, 201],
    [2, 200],
  ] as const) {
    app.post(
      `/refunds/v${version}`,
      oncely.idempotent({
        operation: 'refund',
        scope,
        shared: true,
        name: `POST /refunds/v${version}`,
      }),
      handler((_req, res) => {
        res.status(status).json({ refund: probe.hit('refund'), version });
      }),
    );
  }
  app.post(
    '/bytes',
    oncely.idempotent({ operation: 'bytes', scope }),
    handler((_req, res) => {
      probe.hit('bytes');
      res.type('application/octet-stream').send(randomBytes(4096));
    }),
  );
  app.post(
    '/headers',
    oncely.idempotent({ operation: 'headers', scope, replayHeaders: ['x-order-version'] }),
    handler((_req, res) => {
      res
        .cookie('session', randomUUID())
        .set('etag', '"v1"')
        .set('x-order-version', '7')
        .set('x-debug', 'per-response')
        .vary('accept-language')
        .status(200)
        .json({ execution: probe.hit('headers') });
    }),
  );
  app.post(
    '/users',
    oncely.idempotent({ operation: 'user-create', scope, validate: validateUser }),
    handler((req, res) => {
      probe.hit('user-create');
      const { name } = req.body as { name: string };
      res.status(201).json(new UserView(randomUUID(), name, CONFORMANCE_SECRET));
    }),
  );
  app.post(
    '/slow-users',
    oncely.idempotent({ operation: 'slow-user', scope, validate: validateUser }),
    handler(async (req, res) => {
      probe.hit('slow-user');
      const { name } = req.body as { name: string };
      await probe.pass(`slow-user:${name}`);
      res.status(201).json(new UserView(randomUUID(), name, CONFORMANCE_SECRET));
    }),
  );
  app.post(
    '/hung',
    oncely.idempotent({
      operation: 'hung',
      scope,
      maxDuration: 1000,
      onBusy: 'wait',
      wait: 10_000,
    }),
    handler(async (_req, res) => {
      const execution = probe.hit('hung');
      await probe.pass(`hung:${execution}`);
      res.status(201).json({ execution });
    }),
  );
  app.post(
    '/held-wait',
    oncely.idempotent({ operation: 'held-wait', scope, onBusy: 'wait', wait: 1000 }),
    handler(async (_req, res) => {
      const execution = probe.hit('held-wait');
      await probe.pass(`held-wait:${execution}`);
      res.status(201).json({ execution });
    }),
  );
  app.post(
    '/transient',
    oncely.idempotent({ operation: 'transient', scope, onBusy: 'wait', wait: 10_000 }),
    handler(async (_req, res) => {
      const execution = probe.hit('transient');
      if (execution === 1) {
        await probe.pass('transient:1');
        throw new HttpError(503, { message: 'provider down', execution });
      }
      res.status(201).json({ id: randomUUID(), execution });
    }),
  );
  app.post(
    '/outages/:failures',
    oncely.idempotent({ operation: 'outage-wait', scope, onBusy: 'wait', wait: 10_000 }),
    handler(async (req, res) => {
      const execution = probe.hit('outage-wait');
      await probe.pass('outage-wait');
      if (execution <= Number(req.params.failures)) {
        throw new HttpError(503, { message: 'upstream unavailable', execution });
      }
      res.status(201).json({ execution });
    }),
  );
  const pay = { scope, missingUserStatus: 401 as const };
  app.post(
    '/pay',
    oncely.idempotent({ ...pay, operation: 'pay', target: 'body.orderId', validate: validatePay }),
    handler((req, res) => {
      const { orderId, amount } = req.body as { orderId: string; amount: string };
      res
        .status(201)
        .json({ tenant: tenantOf(req), orderId, amount, executions: probe.hit('pay') });
    }),
  );
  app.post(
    '/echo',
    oncely.idempotent({ ...pay, operation: 'echo' }),
    handler((req, res) => {
      res.status(201).json({ tenant: tenantOf(req), executions: probe.hit('echo') });
    }),
  );
  mountSingleFlightRoutes(app, oncely, probe);
  mountRawResponseRoutes(app, oncely, probe);
  // Express only (see conformance-adapter.e2e.spec.ts): both middleware on one route, the
  // durable record outside, the flight inside.
  app.post(
    '/summaries/:doc',
    oncely.idempotent({ operation: 'summary', scope, target: 'params.doc', onBusy: 'wait' }),
    oncely.singleFlight({
      operation: 'summary-render',
      scope,
      target: 'params.doc',
      input: ['body.model'],
    }),
    handler(async (req, res) => {
      const doc = String(req.params.doc);
      const execution = probe.hit(`summary:${doc}`);
      await probe.pass(`summary:${doc}`);
      res.status(201).json({ doc, execution, summary: randomUUID() });
    }),
  );
}

function mountSingleFlightRoutes(app: Router, oncely: Oncely, probe: ConformanceProbe): void {
  const flight = { target: 'params.id', input: [] };
  app.get(
    '/users/:id',
    oncely.singleFlight({ ...flight, operation: 'user-read', resultTtl: 60_000 }),
    handler((req, res) => {
      const id = String(req.params.id);
      probe.hit(`user-read:${id}`);
      res.json(new UserView(id, 'Ada', CONFORMANCE_SECRET));
    }),
  );
  app.get(
    '/reports/:id',
    oncely.singleFlight({ ...flight, operation: 'report', resultTtl: 60_000 }),
    handler(async (req, res) => {
      const id = String(req.params.id);
      const execution = probe.hit(`report:${id}`);
      await probe.pass(`report:${id}`);
      res.json({ id, execution, renderedBy: randomUUID() });
    }),
  );
  app.get(
    '/reports/:id/strict',
    oncely.singleFlight({ ...flight, operation: 'report-strict', onBusy: 'reject', resultTtl: 0 }),
    handler(async (req, res) => {
      const id = String(req.params.id);
      const execution = probe.hit(`strict:${id}`);
      await probe.pass(`strict:${id}`);
      res.json({ id, execution });
    }),
  );
  app.get(
    '/reports/:id/invalid',
    oncely.singleFlight({ ...flight, operation: 'report-invalid', errorTtl: 60_000 }),
    handler((req) => {
      const id = String(req.params.id);
      throw new HttpError(400, {
        message: 'unknown report',
        execution: probe.hit(`invalid:${id}`),
      });
    }),
  );
  app.get(
    '/outages/:failures/:id',
    oncely.singleFlight({ ...flight, operation: 'outage', resultTtl: 60_000 }),
    handler(async (req, res) => {
      const id = String(req.params.id);
      const execution = probe.hit(`outage:${id}`);
      await probe.pass(`outage:${id}`);
      if (execution <= Number(req.params.failures)) {
        throw new HttpError(503, { message: 'upstream unavailable', execution });
      }
      res.json({ id, execution });
    }),
  );
  app.get(
    '/lookups/:status/:id',
    oncely.singleFlight({
      ...flight,
      operation: 'lookup-status',
      resultTtl: 60_000,
      errorTtl: 60_000,
    }),
    handler(async (req, res) => {
      const id = String(req.params.id);
      const execution = probe.hit(`lookup:${id}`);
      await probe.pass(`lookup:${id}`);
      res.status(Number(req.params.status)).json({ id, execution });
    }),
  );
}

/** Handlers that write the Node response themselves, as plain Express allows. */
function mountRawResponseRoutes(app: Router, oncely: Oncely, probe: ConformanceProbe): void {
  app.post(
    '/chunks',
    oncely.idempotent({ operation: 'chunks', scope }),
    handler((_req, res) => {
      probe.hit('chunks');
      res.type('application/json');
      res.write('{"a":');
      res.write('1');
      res.end('}');
    }),
  );
  app.post(
    '/double-json',
    oncely.idempotent({ operation: 'double-json', scope }),
    handler((_req, res) => {
      probe.hit('double-json');
      res.json({ n: 1 });
      res.json({ n: 2 });
    }),
  );
  app.post(
    '/json-then-error',
    oncely.idempotent({ operation: 'json-then-error', scope }),
    (_req, res, next) => {
      probe.hit('json-then-error');
      res.json({ ok: true });
      next(new HttpError(500, { message: 'after the answer' }));
    },
  );
  app.post('/stream', oncely.idempotent({ operation: 'stream', scope }), (_req, res) => {
    probe.hit('stream');
    Readable.from([Buffer.from('part 1'), Buffer.from('part 2')]).pipe(res);
  });
  app.post(
    '/next-error',
    oncely.idempotent({ operation: 'next-error', scope }),
    (_req, _res, next) => {
      next(new HttpError(422, { message: 'passed on', execution: probe.hit('next-error') }));
    },
  );
}
