import { randomUUID } from 'node:crypto';
import { InMemoryFlightCoordinator, PayloadTooLargeError, type HandlerContext } from '@oncely/core';
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

const routeOf = (transactional: boolean) =>
  defineProtectedRoute(
    'Orders.create',
    {
      idempotent: { operation: 'order', scope: 'user.tenant', transactional, maxResponseBytes: 64 },
    },
    { ...DEFAULT_PROTECTION, namespace: 'unkept' },
  );

/**
 * A response too large to keep, after the handler wrote its row: outside a transaction the row
 * stays and so does the refusal (a retry replays it); in the record's transaction the row rolls
 * back with it, nothing is kept, and a retry runs again.
 */
describe.each(recordDatabases())('a response too large to keep, %s', (_, database) => {
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

  /** An executor on this database, and a call of `route` whose handler writes a row per run. */
  function ordering(transactional: boolean) {
    const coordinator = new InMemoryFlightCoordinator({ sweepInterval: 0 });
    const executor = new ProtectedCallExecutor(
      createProtectionEngines({
        coordinator,
        store: new TypeOrmIdempotencyRecordStore(dataSource),
      }),
    );
    const route = routeOf(transactional);
    const key = randomUUID();
    const prefix = key.slice(0, 8);
    let runs = 0;
    const handler = async ({ transaction }: HandlerContext): Promise<HttpResponse> => {
      const orderRef = `${prefix}-${++runs}`;
      await orders.insert(
        (transaction as EntityManager | undefined) ?? dataSource.manager,
        orderRef,
        'handler',
      );
      return {
        status: 201,
        headers: { 'content-type': 'application/json' },
        body: { kind: 'json', value: { orderRef, padding: 'x'.repeat(128) } },
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
    const rows = async () => (await orders.rows()).filter((row) => row.startsWith(prefix));
    return { call, rows, runs: () => runs, close: () => coordinator.close() };
  }

  it('outside a transaction: one row, the 413 kept and replayed to the retry', async () => {
    const { call, rows, runs, close } = ordering(false);
    const first = await call();
    const retry = await call();
    expect(first.replayed).toBe(false);
    expect(first.response.status).toBe(413);
    expect(retry.replayed).toBe(true);
    expect(retry.response.status).toBe(413);
    expect(retry.response.body).toEqual(first.response.body);
    expect(runs()).toBe(1);
    expect(await rows()).toHaveLength(1);
    await close();
  });

  it("in the record's transaction: the row rolls back, nothing is kept, and the retry runs again", async () => {
    const { call, rows, runs, close } = ordering(true);
    await expect(call()).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(call()).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(runs()).toBe(2);
    expect(await rows()).toEqual([]);
    await close();
  });
});
