import type { INestApplication } from '@nestjs/common';
import { ProblemType } from '@oncely/core';
import { RedisFlightCoordinator } from '@oncely/redis';
import { requireService, services } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { PostgresSchema } from '../fixtures/postgres-schema.js';
import { Executions, PLATFORMS, uniqueNamespace } from '../fixtures/test-app.js';
import { SECRET, createDocsStyleApp, type SerializerPlacement } from './docs-style.app.js';

/**
 * The guarantee inside an app wired as the NestJS docs show (global ClassSerializerInterceptor,
 * the docs' timeout interceptor), on Redis + PostgreSQL, reading what really got stored.
 */
describe.each(PLATFORMS)('a docs-style %s app on Redis + PostgreSQL', (platform) => {
  const keyPrefix = `oncely-docs-${randomUUID().slice(0, 8)}:`;
  const schema = new PostgresSchema();
  let admin: DataSource;
  let redis: Redis;
  let app: INestApplication;

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    redis = new Redis({ ...services.redis, lazyConnect: true });
    await redis.connect();
    admin = await schema.create();
    app = await createDocsStyleApp(
      platform,
      {
        namespace: uniqueNamespace('docs'),
        coordinator: new RedisFlightCoordinator({ ...services.redis }, { keyPrefix }),
        store: new TypeOrmIdempotencyRecordStore(await schema.connect()),
      },
      'root',
    );
  });

  afterAll(async () => {
    await app?.close();
    await schema.drop();
    const keys = await allKeys();
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const post = (path: string, key: string, body: object) =>
    request(app.getHttpServer())
      .post(path)
      .set('x-tenant', 'acme')
      .set('idempotency-key', key)
      .send(body)
      .then((r) => r);
  const executions = (name: string) => app.get(Executions).of(name);

  async function allKeys(): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  }

  /** Every value oncely keeps in Redis under this app's prefix, as text. */
  async function redisText(): Promise<string> {
    const parts: string[] = [];
    for (const key of await allKeys()) {
      const type = await redis.type(key);
      if (type === 'string') parts.push((await redis.getBuffer(key))?.toString('latin1') ?? '');
      if (type === 'hash') {
        const fields = await redis.hgetallBuffer(key);
        parts.push(...Object.values(fields).map((v) => v.toString('latin1')));
      }
    }
    return parts.join('\n');
  }

  async function recordRow(key: string): Promise<{ status: string; body: string } | undefined> {
    const rows = await admin.query<
      Array<{ status: string; response_status: number; response_body: unknown }>
    >(`SELECT status, response_status, response_body FROM ${schema.records} WHERE key LIKE $1`, [
      `%${key}%`,
    ]);
    const [row] = rows;
    if (!row) return undefined;
    return { status: `${row.status}:${row.response_status}`, body: String(row.response_body) };
  }

  it('keeps and replays the serialized user: no password hash stored in PostgreSQL or Redis', async () => {
    const key = randomUUID();
    const first = await post('/docs-style/users', key, { name: 'Ada' });
    expect(first.status).toBe(201);
    expect(Object.keys(first.body).sort()).toEqual(['displayName', 'id', 'name']);
    const replay = await post('/docs-style/users', key, { name: 'Ada' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(executions('user-create')).toBe(1);
    const row = await recordRow(key);
    expect(row?.status).toBe('completed:201');
    expect(row?.body).toContain('displayName');
    expect(row?.body).not.toContain(SECRET);
    expect(await redisText()).not.toContain(SECRET);
  });

  it('shares the serialized user with SingleFlight callers and keeps no password hash in Redis', async () => {
    const id = randomUUID();
    const get = () =>
      request(app.getHttpServer()).get(`/docs-style/users/${id}`).set('x-tenant', 'acme');
    const first = await get();
    const cached = await get();
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['displayName', 'id', 'name']);
    expect(cached.text).toBe(first.text);
    expect(executions(`user-read:${id}`)).toBe(1);
    expect(await redisText()).not.toContain(SECRET);
  });

  it.each([
    [500, 'runs again: a 5xx set through the response object is not kept', 2],
    [409, 'runs again: a 409 set through the response object is not kept', 2],
    [404, 'replays a 404 set through the response object as a 404', 1],
    [200, 'replays a 200 set on a POST as a 200, not the route default 201', 1],
  ])('status %i: %s', async (status, _title, runs) => {
    const key = randomUUID();
    const first = await post(`/docs-style/charges/${status}`, key, { amount: 5 });
    expect(first.status).toBe(status);
    const retry = await post(`/docs-style/charges/${status}`, key, { amount: 5 });
    expect(retry.status).toBe(status);
    expect(executions(`charge-status:${status}`)).toBe(runs);
    const row = await recordRow(key);
    if (runs === 1) {
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.text).toBe(first.text);
      expect(row?.status).toBe(`completed:${status}`);
    } else {
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.body.execution).not.toBe(first.body.execution);
      expect(row).toBeUndefined();
    }
  });

  it('shares a passthrough 404 of a SingleFlight route as a 404, and never caches a 500', async () => {
    const missing = randomUUID();
    const a = await request(app.getHttpServer())
      .get(`/docs-style/lookups/404/${missing}`)
      .set('x-tenant', 'acme');
    const b = await request(app.getHttpServer())
      .get(`/docs-style/lookups/404/${missing}`)
      .set('x-tenant', 'acme');
    expect([a.status, b.status]).toEqual([404, 404]);
    expect(b.text).toBe(a.text);
    expect(app.get(Executions).of(`lookup-status:${missing}`)).toBe(1);

    const failing = randomUUID();
    const c = await request(app.getHttpServer())
      .get(`/docs-style/lookups/500/${failing}`)
      .set('x-tenant', 'acme');
    const d = await request(app.getHttpServer())
      .get(`/docs-style/lookups/500/${failing}`)
      .set('x-tenant', 'acme');
    expect([c.status, d.status]).toEqual([500, 500]);
    expect(d.body.execution).not.toBe(c.body.execution);
    expect(app.get(Executions).of(`lookup-status:${failing}`)).toBe(2);
  });

  it('holds the key until a slow handler settles under the timeout interceptor, then replays it', async () => {
    const key = randomUUID();
    const before = executions('slow-charge');
    const first = await post('/docs-style/slow-charges', key, { amount: 7 });
    expect(first.status).toBe(408);
    const during = await post('/docs-style/slow-charges', key, { amount: 7 });
    expect(during.status).toBe(409);
    expect(during.body.type).toBe(ProblemType.requestInFlight);
    let after = await post('/docs-style/slow-charges', key, { amount: 7 });
    while (after.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await post('/docs-style/slow-charges', key, { amount: 7 });
    }
    expect(after.status).toBe(201);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(Object.keys(after.body).sort()).toEqual(['displayName', 'id', 'name']);
    expect(executions('slow-charge')).toBe(before + 1);
    const row = await recordRow(key);
    expect(row?.status).toBe('completed:201');
    expect(row?.body).not.toContain(SECRET);
  });
});

describe.each(PLATFORMS)('serializer placement on %s (in-memory defaults)', (platform) => {
  it.each<SerializerPlacement>(['root', 'imported-first'])(
    'replays what the client got with the serializer registered %s',
    async (placement) => {
      const app = await createDocsStyleApp(
        platform,
        { namespace: uniqueNamespace('docs') },
        placement,
      );
      try {
        const key = randomUUID();
        const post = () =>
          request(app.getHttpServer())
            .post('/docs-style/users')
            .set('x-tenant', 'acme')
            .set('idempotency-key', key)
            .send({ name: 'Grace' });
        const first = await post();
        const replay = await post();
        expect(Object.keys(first.body).sort()).toEqual(['displayName', 'id', 'name']);
        expect(replay.text).toBe(first.text);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(app.get(Executions).of('user-create')).toBe(1);
      } finally {
        await app.close();
      }
    },
  );
});
