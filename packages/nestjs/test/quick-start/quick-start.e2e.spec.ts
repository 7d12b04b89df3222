import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from './app.module.js';

/** The first `ts` block after the root README's "## Quick start" heading. */
function quickStartBlock(): string {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Quick start\n'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error('README.md has no ts block under "## Quick start"');
  return block[1];
}

describe('the README quick start', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app.close());

  it('is this fixture, word for word', () => {
    const fixture = readFileSync(new URL('./app.module.ts', import.meta.url), 'utf8');
    expect(quickStartBlock()).toBe(fixture);
  });

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
