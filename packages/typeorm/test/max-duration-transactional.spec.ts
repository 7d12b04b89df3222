import { randomUUID } from 'node:crypto';
import {
  InMemoryFlightCoordinator,
  MaxDurationExceededError,
  toProblemResponse,
  type HandlerContext,
} from '@oncely/core';
import {
  DEFAULT_PROTECTION,
  ProtectedCallExecutor,
  createProtectionEngines,
  defineProtectedRoute,
  resolveCallKeys,
  type HttpResponse,
} from '@oncely/core/adapter';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { deferred } from './support/deferred.js';
import { OrdersTable } from './support/orders-table.js';
import { recordDatabases } from './support/record-databases.js';

const route = defineProtectedRoute(
  'Orders.create',
  {
    idempotent: {
      operation: 'order',
      scope: 'user.tenant',
      transactional: true,
      maxDuration: 500,
    },
  },
  { ...DEFAULT_PROTECTION, namespace: 'expiry' },
);

const created = (orderRef: string): HttpResponse => ({
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: { kind: 'json', value: { orderRef } },
});

/**
 * Servers only: on SQLite TypeORM shares its one connection, so a handler that ignores its signal
 * can still write through its manager after the rollback (outside any transaction); docs/http.md
 * says so.
 */
const servers = recordDatabases().filter(([name]) => name !== 'sqlite');

describe.each(servers)('maxDuration on a transactional route, %s', (_, database) => {
  let dataSource: DataSource;
  let orders: OrdersTable;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
    orders = new OrdersTable(dataSource);
    await orders.create();
  });

  afterAll(async () => {
    await orders.drop();
    await database.tearDown();
  });

  it("rolls the hung handler's writes back, runs the retry, and keeps nothing the late handler does", async () => {
    const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const executor = new ProtectedCallExecutor(createProtectionEngines({ coordinator, store }));
    const key = randomUUID();
    const hung = deferred();
    const lateDone = deferred<unknown>();
    let runs = 0;
    const handler = async ({ transaction }: HandlerContext): Promise<HttpResponse> => {
      const run = ++runs;
      const manager = transaction as EntityManager;
      const orderRef = `${key.slice(0, 8)}-${run}`;
      await orders.insert(manager, orderRef, 'before');
      if (run === 1) {
        await hung.promise;
        try {
          await orders.insert(manager, `${orderRef}-late`, 'after');
          lateDone.resolve('written');
        } catch (error) {
          lateDone.resolve(error);
        }
      }
      return created(orderRef);
    };
    const call = () =>
      executor.execute({
        route,
        keys: resolveCallKeys(route, {
          body: { sku: 'a' },
          headers: { 'idempotency-key': key },
          user: { tenant: 't-1' },
        }),
        handler,
      });

    const expired = await call().catch((error: unknown) => error);
    expect(expired).toBeInstanceOf(MaxDurationExceededError);
    expect(toProblemResponse(expired)?.status).toBe(503);
    expect(await orders.rows()).not.toContain(`${key.slice(0, 8)}-1:before`);

    const retried = await call();
    expect(retried).toEqual({ replayed: false, response: created(`${key.slice(0, 8)}-2`) });

    hung.resolve();
    expect(await lateDone.promise).toBeInstanceOf(Error);
    const replay = await call();
    expect(replay.replayed).toBe(true);
    expect(replay.response.body).toEqual({
      kind: 'json',
      value: { orderRef: `${key.slice(0, 8)}-2` },
    });
    expect(runs).toBe(2);
    expect((await orders.rows()).filter((row) => row.startsWith(key.slice(0, 8)))).toEqual([
      `${key.slice(0, 8)}-2:before`,
    ]);
    await coordinator.close();
  });
});
