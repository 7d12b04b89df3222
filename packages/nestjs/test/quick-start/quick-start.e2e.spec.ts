import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
// The README's quick start, word for word (the compat matrix checks the two are the same and runs
// it on Nest 11, CommonJS and Jest 29); here it runs on this repository's Nest 12 and sources.
import { AppModule } from '../../../../compat/nest11-jest29/src/app.module.js';

describe('the README quick start', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app.close());

  it('answers a first request 201 and its retry with the stored response', async () => {
    const key = randomUUID();
    const send = () =>
      request(app.getHttpServer())
        .post('/orders')
        .set('x-tenant-id', 'acme')
        .set('idempotency-key', key)
        .send({ cartId: 'cart-77', qty: 2 });

    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body).toEqual({ orderId: expect.any(String), cartId: 'cart-77', qty: 2 });

    const replay = await send();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('answers the same key with another payload 422', async () => {
    const key = randomUUID();
    const send = (qty: number) =>
      request(app.getHttpServer())
        .post('/orders')
        .set('x-tenant-id', 'acme')
        .set('idempotency-key', key)
        .send({ cartId: 'cart-77', qty });
    expect((await send(1)).status).toBe(201);
    expect((await send(3)).status).toBe(422);
  });
});
