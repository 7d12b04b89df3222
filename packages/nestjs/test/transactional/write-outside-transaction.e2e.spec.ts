import type { INestApplication } from '@nestjs/common';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createTestApp, uniqueNamespace } from '../fixtures/test-app.js';
import { Deployment, PAYMENTS, PaymentsController } from './payments.controller.js';
import { Payment, paymentsDatabases } from './payments.databases.js';

describe.each(paymentsDatabases())(
  'a transactional route on %s whose handler writes outside its transaction',
  (_name, database) => {
    let dataSource: DataSource;
    let app: INestApplication;

    beforeAll(async () => {
      dataSource = await database.open();
      app = await createTestApp(
        'express',
        { namespace: uniqueNamespace('tx'), store: new TypeOrmIdempotencyRecordStore(dataSource) },
        [PaymentsController],
        {
          providers: [
            Deployment,
            { provide: DataSource, useValue: dataSource },
            { provide: PAYMENTS, useValue: dataSource.getRepository(Payment) },
          ],
        },
      );
    });

    afterAll(async () => {
      await app?.close();
      await database.close();
    });

    afterEach(() => {
      app.get(Deployment).fixed = false;
    });

    const post = (path: string, key: string, body: { ref: string; amount: number }) =>
      request(app.getHttpServer())
        .post(`/payments/${path}`)
        .set('x-tenant', 't-1')
        .set('idempotency-key', key)
        .send(body)
        .then((response) => response);
    const rows = (ref: string) => dataSource.getRepository(Payment).countBy({ ref });
    const refusal = {
      type: 'urn:oncely:problem:write-outside-transaction',
      status: 500,
      detail: 'The request was rolled back and nothing was kept; a retry runs it again.',
    };

    it.each([['repository'], ['own-transaction']])(
      'refuses the write made through %s, keeps no row, and a retry through @IdempotencyManager() pays once',
      async (path) => {
        const key = randomUUID();
        const payment = { ref: randomUUID(), amount: 100 };

        const refused = await post(path, key, payment);
        expect(refused.status).toBe(500);
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(refused.body).toMatchObject(refusal);
        expect(await rows(payment.ref)).toBe(0);

        app.get(Deployment).fixed = true;
        const retried = await post(path, key, payment);
        expect(retried.status).toBe(201);
        expect(retried.headers['idempotent-replayed']).toBeUndefined();
        expect(await rows(payment.ref)).toBe(1);

        const replayed = await post(path, key, payment);
        expect(replayed.status).toBe(201);
        expect(replayed.headers['idempotent-replayed']).toBe('true');
        expect(replayed.body).toEqual(retried.body);
        expect(await rows(payment.ref)).toBe(1);
      },
    );

    it('fails the call even when the handler swallows the refused write, and keeps nothing to replay', async () => {
      const key = randomUUID();
      const payment = { ref: randomUUID(), amount: 5 };
      // The handler answered before the refusal failed the call: the client gets the refusal
      // instead of that answer, and the record is released, not completed.
      for (const attempt of [1, 2]) {
        const refused = await post('swallowing', key, payment);
        expect([attempt, refused.status]).toEqual([attempt, 500]);
        expect(refused.body).toMatchObject(refusal);
        expect(refused.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(await rows(payment.ref)).toBe(0);
    });

    it('commits exactly one row for a handler writing through its manager, and replays it', async () => {
      const key = randomUUID();
      const payment = { ref: randomUUID(), amount: 42 };
      const first = await post('manager', key, payment);
      expect(first.status).toBe(201);
      expect(first.body).toEqual({ id: expect.any(Number), ref: payment.ref });
      const replayed = await post('manager', key, payment);
      expect(replayed.status).toBe(201);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toEqual(first.body);
      expect(await rows(payment.ref)).toBe(1);
    });

    it('lets the handler read through an injected repository', async () => {
      const ref = randomUUID();
      await dataSource.getRepository(Payment).save({ ref, amount: 7 });
      const response = await post('read-then-pay', randomUUID(), { ref, amount: 8 });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ earlier: 1, latestAmount: 7, ref });
      expect(await rows(ref)).toBe(2);
    });
  },
);
