import { randomUUID } from 'node:crypto';
import { InMemoryFlightCoordinator, type HandlerContext } from '@oncely/core';
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
import { OrdersTable } from './support/orders-table.js';
import { recordDatabases } from './support/record-databases.js';

const LEASE_TTL = 600;

const route = defineProtectedRoute(
  'Orders.create',
  { idempotent: { operation: 'order', scope: 'user.tenant', transactional: true } },
  { ...DEFAULT_PROTECTION, namespace: 'renewal', leaseTtl: LEASE_TTL },
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A transactional handler that runs for several lease TTLs keeps its lease: while its
 * transaction holds the record row locked, a renewal on another connection would wait for that
 * lock, and the lease would be given up (the handler's signal aborted) though nobody could take
 * it over.
 */
describe.each(recordDatabases())('lease renewal during a transactional call, %s', (_, database) => {
  let dataSource: DataSource;
  let orders: OrdersTable;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect(4);
    orders = new OrdersTable(dataSource);
    await orders.create();
  });

  afterAll(async () => {
    await orders.drop();
    await database.tearDown();
  });

  it('keeps the lease of a handler that runs four lease TTLs, and commits its work once', async () => {
    const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const executor = new ProtectedCallExecutor(createProtectionEngines({ coordinator, store }));
    const key = randomUUID();
    const orderRef = key.slice(0, 8);
    let runs = 0;
    let abortedWith: unknown;
    const handler = async ({ transaction, signal }: HandlerContext): Promise<HttpResponse> => {
      runs += 1;
      await orders.insert(transaction as EntityManager, orderRef, 'placed');
      await sleep(LEASE_TTL * 4);
      abortedWith = signal.aborted ? signal.reason : undefined;
      signal.throwIfAborted();
      return {
        status: 201,
        headers: { 'content-type': 'application/json' },
        body: { kind: 'json', value: { orderRef } },
      };
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

    const first = await call();
    expect(abortedWith).toBeUndefined();
    expect(first.replayed).toBe(false);
    expect(first.response.status).toBe(201);
    expect((await call()).replayed).toBe(true);
    expect(runs).toBe(1);
    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
      `${orderRef}:placed`,
    ]);
    await coordinator.close();
  });
});
