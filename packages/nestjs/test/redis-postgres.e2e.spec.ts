import type { INestApplication } from '@nestjs/common';
import { ProblemType, type OncelyEvent } from '@oncely/core';
import type { OncelyModuleOptions } from '@oncely/nestjs';
import { RedisFlightCoordinator, RedisIdempotencyRecordStore } from '@oncely/redis';
import { requireService, services, startRedisServer, type RedisServer } from '@oncely/testing-kit';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { PostgresSchema, RecordQueryCounter } from './fixtures/postgres-schema.js';
import { OrdersController } from './fixtures/orders.controller.js';
import { ORDERS_TABLE, ShopController } from './fixtures/shop.controller.js';
import {
  createTestApp,
  Executions,
  Gates,
  PLATFORMS,
  uniqueNamespace,
  type Platform,
} from './fixtures/test-app.js';

const order = (customer: string) => ({ customer, lines: [{ sku: 'sku-1', quantity: 1 }] });

/** Two Nest apps ("nodes") sharing one Redis and one PostgreSQL schema. */
class Cluster {
  readonly namespace = uniqueNamespace('rp');
  readonly keyPrefix = `oncely-nest-${randomUUID().slice(0, 8)}:`;
  readonly schema = new PostgresSchema();
  readonly counterB = new RecordQueryCounter();
  readonly events: OncelyEvent[] = [];
  admin!: DataSource;
  a!: INestApplication;
  b!: INestApplication;

  async start(platform: Platform, redis: { host: string; port: number }): Promise<void> {
    this.admin = await this.schema.create();
    const node = async (source: DataSource) =>
      createTestApp(
        platform,
        {
          namespace: this.namespace,
          coordinator: new RedisFlightCoordinator(
            { ...redis },
            { keyPrefix: this.keyPrefix, commandTimeout: 300 },
          ),
          store: new TypeOrmIdempotencyRecordStore(source),
          events: (event) => this.events.push(event),
        } satisfies OncelyModuleOptions,
        [ShopController],
        { providers: [{ provide: ORDERS_TABLE, useValue: this.schema.orders }] },
      );
    this.a = await node(await this.schema.connect());
    this.b = await node(await this.schema.connect(this.counterB));
  }

  async stop(): Promise<void> {
    await Promise.allSettled([this.a?.close(), this.b?.close()]);
    await this.schema.drop();
  }

  executions(name: string): number {
    return this.a.get(Executions).of(name) + this.b.get(Executions).of(name);
  }

  /** Resolves once a handler on either node waits at the gate. */
  entered(gate: string): Promise<void> {
    return Promise.race([this.a.get(Gates).entered$(gate), this.b.get(Gates).entered$(gate)]);
  }

  open(gate: string): void {
    this.a.get(Gates).open(gate);
    this.b.get(Gates).open(gate);
  }

  post(node: INestApplication, path: string, key: string, body: object, tenant = 't-1') {
    return request(node.getHttpServer())
      .post(path)
      .set('x-tenant', tenant)
      .set('idempotency-key', key)
      .send(body)
      .then((r) => r);
  }

  async orderRows(customer: string): Promise<number> {
    const [row] = await this.admin.query(
      `SELECT count(*)::int AS n FROM ${this.schema.orders} WHERE customer = $1`,
      [customer],
    );
    return (row as { n: number }).n;
  }

  async recordRows(fragment: string): Promise<number> {
    const [row] = await this.admin.query(
      `SELECT count(*)::int AS n FROM ${this.schema.records} WHERE key LIKE $1`,
      [`%${fragment}%`],
    );
    return (row as { n: number }).n;
  }
}

async function redisKeys(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

describe.each(PLATFORMS)('on Redis + PostgreSQL, two %s nodes', (platform) => {
  const cluster = new Cluster();
  let redis: Redis;

  beforeAll(async () => {
    await requireService('redis');
    await requireService('postgres');
    redis = new Redis({ ...services.redis, lazyConnect: true });
    await redis.connect();
    await cluster.start(platform, services.redis);
  });

  afterAll(async () => {
    await cluster.stop();
    const keys = await redisKeys(redis, `${cluster.keyPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('replays from the Redis result cache without a database round trip', async () => {
    // Control: node B's counter does see its record statements.
    const control = cluster.counterB.count;
    await cluster.post(cluster.b, '/shop/orders/plain', randomUUID(), order('control'));
    expect(cluster.counterB.count).toBeGreaterThan(control);

    const key = randomUUID();
    const first = await cluster.post(cluster.a, '/shop/orders/plain', key, order('cache'));
    expect(first.status).toBe(201);
    const before = cluster.counterB.count;
    const replay = await cluster.post(cluster.b, '/shop/orders/plain', key, order('cache'));
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(cluster.counterB.count).toBe(before);
    expect(await cluster.recordRows(key)).toBe(1);
  });

  it('refuses an in-flight duplicate on another node at the Redis lease, without a database round trip', async () => {
    const key = randomUUID();
    const customer = `lease-${randomUUID()}`;
    const first = cluster.post(cluster.a, '/shop/orders/slow', key, order(customer));
    await cluster.entered(`shop-slow:${customer}`);
    const before = cluster.counterB.count;
    const duplicate = await cluster.post(cluster.b, '/shop/orders/slow', key, order(customer));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.type).toBe(ProblemType.requestInFlight);
    expect(Number(duplicate.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(cluster.counterB.count).toBe(before);
    cluster.open(`shop-slow:${customer}`);
    expect((await first).status).toBe(201);
    const replay = await cluster.post(cluster.b, '/shop/orders/slow', key, order(customer));
    expect(replay.body).toEqual((await first).body);
    expect(cluster.executions('shop-slow')).toBe(1);
  });

  it('answers 422 on another node for the same key with another payload', async () => {
    const key = randomUUID();
    await cluster.post(cluster.a, '/shop/orders/plain', key, order('p-1'));
    const other = await cluster.post(cluster.b, '/shop/orders/plain', key, order('p-2'));
    expect(other.status).toBe(422);
    expect(other.body.type).toBe(ProblemType.payloadMismatch);
  });

  it('runs 50 concurrent identical SingleFlight requests on two nodes exactly once', async () => {
    const id = randomUUID();
    const calls = Array.from({ length: 50 }, (_, i) =>
      request((i % 2 ? cluster.a : cluster.b).getHttpServer())
        .get(`/shop/reports/${id}`)
        .set('x-tenant', 't-1')
        .then((r) => r),
    );
    await cluster.entered(`report:${id}`);
    cluster.open(`report:${id}`);
    const responses = await Promise.all(calls);
    expect(cluster.executions(`report:${id}`)).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(responses.map((r) => r.body.renderedBy)).size).toBe(1);
  });

  it('runs 50 concurrent identical idempotent requests on two nodes exactly once; the rest replay or get 409', async () => {
    const key = randomUUID();
    const customer = `crowd-${randomUUID()}`;
    const before = cluster.executions('shop-plain');
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        cluster.post(i % 2 ? cluster.a : cluster.b, '/shop/orders/plain', key, order(customer)),
      ),
    );
    expect(cluster.executions('shop-plain')).toBe(before + 1);
    const created = responses.filter((r) => r.status === 201);
    const refused = responses.filter((r) => r.status === 409);
    expect(created.length + refused.length).toBe(50);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await cluster.recordRows(key)).toBe(1);
  });

  it('transactional: 20 concurrent duplicates on two nodes write exactly one order row', async () => {
    const key = randomUUID();
    const customer = `tx-${randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        cluster.post(i % 2 ? cluster.a : cluster.b, '/shop/orders', key, order(customer)),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((r) => r.body.orderId)).size).toBe(1);
    expect(await cluster.orderRows(customer)).toBe(1);
    expect(cluster.executions('shop-order')).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
  });

  it('transactional: a failing handler commits neither its row nor the record, so a retry runs again', async () => {
    const key = randomUUID();
    const customer = `fail-${randomUUID()}`;
    const before = cluster.executions('shop-failing');
    expect(
      (await cluster.post(cluster.a, '/shop/orders/failing', key, order(customer))).status,
    ).toBe(500);
    expect(await cluster.orderRows(customer)).toBe(0);
    expect(await cluster.recordRows(key)).toBe(0);
    expect(
      (await cluster.post(cluster.b, '/shop/orders/failing', key, order(customer))).status,
    ).toBe(500);
    expect(cluster.executions('shop-failing')).toBe(before + 2);
  });

  it('isolates tenants: one key from two tenants on two nodes runs twice', async () => {
    const key = randomUUID();
    const a = await cluster.post(cluster.a, '/shop/orders/plain', key, order('iso'), 'tenant-a');
    const b = await cluster.post(cluster.b, '/shop/orders/plain', key, order('iso'), 'tenant-b');
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.id).not.toBe(a.body.id);
    expect(await cluster.recordRows(key)).toBe(2);
  });

  it('an invalid DTO leaves no lease, cache entry or record behind', async () => {
    const key = randomUUID();
    const invalid = await cluster.post(cluster.a, '/shop/orders/plain', key, {
      customer: 42,
      lines: [],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.type).toBe(ProblemType.invalidBody);
    expect(await redisKeys(redis, `${cluster.keyPrefix}*${key}*`)).toEqual([]);
    expect(await cluster.recordRows(key)).toBe(0);
    // Control: a valid request with that key does leave both behind.
    expect((await cluster.post(cluster.a, '/shop/orders/plain', key, order('valid'))).status).toBe(
      201,
    );
    expect((await redisKeys(redis, `${cluster.keyPrefix}*${key}*`)).length).toBeGreaterThan(0);
    expect(await cluster.recordRows(key)).toBe(1);
  });
});

describe.each(PLATFORMS)('Redis stopped mid-test, two %s nodes', (platform) => {
  const cluster = new Cluster();
  let server: RedisServer;

  beforeAll(async () => {
    await requireService('postgres');
    server = await startRedisServer();
    await cluster.start(platform, { host: server.host, port: server.port });
  });

  afterAll(async () => {
    await cluster.stop();
    await server.stop();
  });

  it('SingleFlight follows onCoordinatorDown and idempotent routes still refuse duplicates through the database', async () => {
    const done = randomUUID();
    const completed = await cluster.post(
      cluster.a,
      '/shop/orders/plain',
      done,
      order('before-outage'),
    );
    expect(completed.status).toBe(201);

    await server.stop();

    // Completed before the outage: replayed from the database by the other node.
    const replay = await cluster.post(
      cluster.b,
      '/shop/orders/plain',
      done,
      order('before-outage'),
    );
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(completed.body);

    // open: runs uncoordinated; closed: 503 problem.
    const open = await request(cluster.a.getHttpServer())
      .get('/shop/reports/r1/open')
      .set('x-tenant', 't');
    expect(open.status).toBe(200);
    const closed = await request(cluster.a.getHttpServer())
      .get('/shop/reports/r1/closed')
      .set('x-tenant', 't');
    expect(closed.status).toBe(503);
    expect(closed.body.type).toBe(ProblemType.coordinatorUnavailable);
    expect(cluster.executions('closed:r1')).toBe(0);

    // An in-flight duplicate on the other node is refused by the database record.
    const key = randomUUID();
    const customer = `outage-${randomUUID()}`;
    const first = cluster.post(cluster.a, '/shop/orders/slow', key, order(customer));
    await cluster.entered(`shop-slow:${customer}`);
    const duplicate = await cluster.post(cluster.b, '/shop/orders/slow', key, order(customer));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers['retry-after']).toBeDefined();
    cluster.open(`shop-slow:${customer}`);
    expect((await first).status).toBe(201);
    const after = await cluster.post(cluster.b, '/shop/orders/slow', key, order(customer));
    expect(after.body).toEqual((await first).body);
    expect(cluster.executions('shop-slow')).toBe(1);

    expect(cluster.events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ mechanism: 'single-flight', outcome: 'coordinator_down' }),
        expect.objectContaining({ mechanism: 'idempotency', outcome: 'coordinator_down' }),
      ]),
    );

    // Redis back: coordination resumes without a restart.
    await server.start();
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = (
        await request(cluster.a.getHttpServer()).get('/shop/reports/r2/closed').set('x-tenant', 't')
      ).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});

describe('an ioredis client as coordinator and Redis record store (no SQL)', () => {
  const namespace = uniqueNamespace('rr');
  const keyPrefix = `oncely-nest-${randomUUID().slice(0, 8)}:`;
  let client: Redis;
  let app: INestApplication;
  /** One app on fresh adapters around the one client: each app closes its own adapters. */
  const startApp = () =>
    createTestApp(
      'express',
      {
        namespace,
        coordinator: new RedisFlightCoordinator(client),
        store: new RedisIdempotencyRecordStore(client, { keyPrefix }),
      },
      [OrdersController],
    );

  beforeAll(async () => {
    await requireService('redis');
    client = new Redis({ ...services.redis });
    app = await startApp();
  });

  afterAll(async () => {
    await app?.close();
    const keys = [
      ...(await redisKeys(client, `${keyPrefix}*`)),
      ...(await redisKeys(client, `oncely:*${namespace}*`)),
    ];
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  it('executes once, replays from Redis, and leaves the client it was given open', async () => {
    const key = randomUUID();
    const send = () =>
      request(app.getHttpServer())
        .post('/orders')
        .set('x-tenant', 't-1')
        .set('idempotency-key', key)
        .send(order('redis-only'))
        .then((r) => r);
    const first = await send();
    const replay = await send();
    expect(first.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(app.get(Executions).of('order-create')).toBe(1);
    expect(await redisKeys(client, `${keyPrefix}*:record`)).toHaveLength(1);
    await app.close();
    expect(client.status).toBe('ready');
    app = await startApp();
    const afterRestart = await send();
    expect(afterRestart.headers['idempotent-replayed']).toBe('true');
    expect(afterRestart.body).toEqual(first.body);
    expect(app.get(Executions).of('order-create')).toBe(0);
  });
});
