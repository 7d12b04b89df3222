import {
  InMemoryFlightCoordinator,
  InMemoryIdempotencyRecordStore,
  PROBLEM_CONTENT_TYPE,
  ProblemType,
} from '@oncely/core';
import { createOncely, type Oncely } from '@oncely/express';
import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { uniqueNamespace } from './fixtures/backends.js';
import { Executions } from './fixtures/gates.js';

describe('a full in-memory record store (maxRecords)', () => {
  let oncely: Oncely;
  let app: Express;
  const executions = new Executions();

  beforeAll(() => {
    oncely = createOncely({
      namespace: uniqueNamespace('cap'),
      coordinator: new InMemoryFlightCoordinator(),
      store: new InMemoryIdempotencyRecordStore({ maxRecords: 2 }),
      resolveUser: () => ({ tenantId: 'acme' }),
    });
    app = express();
    app.use(express.json());
    app.post(
      '/orders',
      oncely.idempotent({ operation: 'order-create', scope: 'user.tenantId' }),
      (req, res) => {
        res.status(201).json({ execution: executions.hit('order'), item: req.body.item });
      },
    );
  });

  afterAll(() => oncely.close());

  const order = (key: string, item = 'tea') =>
    request(app).post('/orders').set('idempotency-key', key).send({ item });

  it('refuses new keys with 503 problem+json and Retry-After, and keeps replaying held ones', async () => {
    const held = [randomUUID(), randomUUID()];
    const first = await Promise.all(held.map((key) => order(key)));
    expect(first.map((response) => response.status)).toEqual([201, 201]);

    const refused = await Promise.all(Array.from({ length: 5 }, () => order(randomUUID())));

    for (const response of refused) {
      expect(response.status).toBe(503);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(response.body).toMatchObject({
        type: ProblemType.capacityExceeded,
        title: 'Server at capacity',
        status: 503,
      });
    }
    const replays = await Promise.all(held.map((key) => order(key)));
    for (const [index, replay] of replays.entries()) {
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first[index]?.body);
    }
    expect((await order(held[0] as string, 'coffee')).status).toBe(422);
    expect(executions.of('order')).toBe(2);
  });
});
