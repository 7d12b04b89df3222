import { INestApplication } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { ProblemType } from '@oncely/core';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { App } from 'supertest/types';
import { AppModule } from '../src/app.module';

describe('the README quick start (e2e)', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();

    app = moduleFixture.createNestApplication();
    await app.init();
  });

  afterAll(() => app?.close());

  const order = (key: string, qty: number) =>
    request(app.getHttpServer())
      .post('/orders')
      .set('x-tenant-id', 'acme')
      .set('idempotency-key', key)
      .send({ cartId: 'cart-77', qty });

  it('runs without @opentelemetry/api installed, as an app on the defaults does', () => {
    expect(() => require.resolve('@opentelemetry/api')).toThrow(
      "Cannot find module '@opentelemetry/api'",
    );
  });

  it('answers 201 and a retry with the kept response', async () => {
    const key = randomUUID();
    const first = await order(key, 2);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body).toEqual({ orderId: expect.any(String), cartId: 'cart-77', qty: 2 });

    const retry = await order(key, 2);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
  });

  it('answers the same key with another payload 422 payload-mismatch', async () => {
    const key = randomUUID();
    expect((await order(key, 1)).status).toBe(201);

    const reused = await order(key, 3);
    expect(reused.status).toBe(422);
    expect(reused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(reused.body).toMatchObject({ type: ProblemType.payloadMismatch, status: 422 });
  });
});
