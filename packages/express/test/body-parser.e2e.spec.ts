import { InMemoryIdempotencyRecordStore, ProblemType, type OncelyEvent } from '@oncely/core';
import { createOncely, type Oncely } from '@oncely/express';
import express from 'express';
// Express 4 under the `express4` alias (root devDependency); see conformance/express4.d.ts.
import express4 from 'express4';
import request from 'supertest';
import type { ExpressMajor } from './fixtures/capture.app.js';
import { uniqueNamespace } from './fixtures/backends.js';

/**
 * One app, with or without `express.json()` in front of the routes: an idempotent route keyed on
 * the body (the default input), and one whose key reads no body.
 */
function bodyApp(major: ExpressMajor, parser: boolean) {
  const store = new InMemoryIdempotencyRecordStore();
  const events: OncelyEvent[] = [];
  const oncely: Oncely = createOncely({
    namespace: uniqueNamespace('body'),
    store,
    events: (event) => events.push(event),
    logger: false,
  });
  const executions = { orders: 0, refunds: 0 };
  const app = major();
  if (parser) app.use(major.json());
  app.post(
    '/orders',
    oncely.idempotent({ name: 'POST /orders', operation: 'order', scope: 'headers.x-tenant' }),
    (req, res) => {
      executions.orders += 1;
      res.status(201).json({ execution: executions.orders, body: req.body as unknown });
    },
  );
  app.post(
    '/refunds/:id',
    oncely.idempotent({
      operation: 'refund',
      scope: 'headers.x-tenant',
      target: 'params.id',
      input: [],
    }),
    (req, res) => {
      executions.refunds += 1;
      res.status(201).json({ refund: req.params.id, execution: executions.refunds });
    },
  );
  const order = (key: string, body?: object) => {
    const call = request(app).post('/orders').set('x-tenant', 't-1').set('idempotency-key', key);
    return body === undefined ? call : call.send(body);
  };
  return { app, oncely, store, events, executions, order };
}

describe.each([
  ['Express 5', express as ExpressMajor],
  ['Express 4', express4 as ExpressMajor],
])('a route keyed on the body, on %s', (_name, major) => {
  it('without express.json(): 500 problem+json naming the missing parser; nothing locked, run or kept', async () => {
    const { oncely, store, events, executions, order } = bodyApp(major, false);
    try {
      const first = await order('k-1', { amount: 10 });
      const other = await order('k-1', { amount: 99 });

      for (const refused of [first, other]) {
        expect(refused.status).toBe(500);
        expect(refused.headers['content-type']).toBe('application/problem+json');
        expect(refused.headers['retry-after']).toBeUndefined();
        expect(refused.body).toEqual({
          type: ProblemType.bodyNotParsed,
          title: 'Request body not parsed',
          status: 500,
          detail:
            "POST /orders builds its idempotency key or fingerprint from the request body, but no body parser ran before oncely. In Express, register express.json() (or another body parser) before oncely's middleware, e.g. app.use(express.json()); in Nest, keep the app's bodyParser on or register a parser yourself; a route whose key reads no body sets input: [] and no body.* path.",
        });
      }
      expect(executions.orders).toBe(0);
      expect(store.size).toBe(0);
      expect(events).toEqual([]);
    } finally {
      await oncely.close();
    }
  });

  it('with express.json(): the same key with another body is 422, the same body replays', async () => {
    const { oncely, executions, order } = bodyApp(major, true);
    try {
      const first = await order('k-2', { amount: 10 });
      const replay = await order('k-2', { amount: 10 });
      const other = await order('k-2', { amount: 99 });

      expect(first.status).toBe(201);
      expect(first.body).toEqual({ execution: 1, body: { amount: 10 } });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(other.status).toBe(422);
      expect(other.body.type).toBe(ProblemType.payloadMismatch);
      expect(executions.orders).toBe(1);
    } finally {
      await oncely.close();
    }
  });

  it('with express.json(): a request sending no body is keyed, not refused', async () => {
    const { oncely, executions, order } = bodyApp(major, true);
    try {
      const first = await order('k-3');
      const replay = await order('k-3');

      expect(first.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(executions.orders).toBe(1);
    } finally {
      await oncely.close();
    }
  });

  it('without express.json(): a route whose key reads no body works and replays', async () => {
    const { app, oncely, store, executions } = bodyApp(major, false);
    try {
      const send = () =>
        request(app).post('/refunds/r-1').set('x-tenant', 't-1').set('idempotency-key', 'k-4');
      const first = await send();
      const replay = await send();

      expect(first.status).toBe(201);
      expect(first.body).toEqual({ refund: 'r-1', execution: 1 });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(executions.refunds).toBe(1);
      expect(store.size).toBe(1);
    } finally {
      await oncely.close();
    }
  });
});
