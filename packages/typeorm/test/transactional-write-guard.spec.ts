import { randomUUID } from 'node:crypto';
import type { BeginOutcome, RecordLease, StoredResponse } from '@oncely/core';
import {
  activeIdempotencyManager,
  guardTransactionalWrites,
  outsideIdempotencyTransaction,
  TypeOrmIdempotencyRecordStore,
  WriteOutsideTransactionError,
} from '@oncely/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { deferred } from './support/deferred.js';
import { OrdersTable } from './support/orders-table.js';
import { FakeClock, recordDatabases } from './support/record-databases.js';

const timing = { leaseTtlMs: 5_000, retentionMs: 60_000 };
const digest = 'g'.repeat(64);
const created: StoredResponse = { status: 201, headers: {}, body: { kind: 'empty' } };

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

describe.each(recordDatabases())('the transactional write guard on %s', (name, database) => {
  let dataSource: DataSource;
  let store: TypeOrmIdempotencyRecordStore;
  let orders: OrdersTable;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
    store = new TypeOrmIdempotencyRecordStore(dataSource, { clock: new FakeClock() });
    orders = new OrdersTable(dataSource);
    await orders.create();
  });

  afterAll(async () => {
    await orders.drop();
    await database.tearDown();
  });

  const lease = async () => acquired(await store.begin(`guard:${randomUUID()}`, digest, timing));
  const rowsOf = async (orderRef: string) =>
    (await orders.rows()).filter((row) => row.startsWith(orderRef));
  const done = <T>(result: T) => ({ response: created, result });

  /** The mistake under test: a write through something other than the call's manager. */
  const outsideWrites: [string, (orderRef: string) => Promise<unknown>][] = [
    ['dataSource.manager', (ref) => orders.insert(dataSource.manager, ref, 'outside')],
    [
      'dataSource.transaction()',
      (ref) => dataSource.transaction((own) => orders.insert(own, ref, 'own-transaction')),
    ],
    [
      'a query builder',
      (ref) =>
        dataSource
          .createQueryBuilder()
          .insert()
          .into(orders.name, ['order_ref', 'written_by'])
          .values({ order_ref: ref, written_by: 'builder' })
          .execute(),
    ],
  ];

  it.each(outsideWrites)(
    'refuses a write through %s, rolls the call back, and a retry through the manager writes once',
    async (_path, write) => {
      const held = await lease();
      const orderRef = randomUUID();
      const refused = store.runInTransaction(held, async (manager) => {
        await orders.insert(manager, orderRef, 'manager-before');
        await write(orderRef);
        return done('unreachable');
      });

      await expect(refused).rejects.toBeInstanceOf(WriteOutsideTransactionError);
      await expect(refused).rejects.toMatchObject({
        code: 'write_outside_transaction',
        statement: 'INSERT',
        message: expect.stringContaining('@IdempotencyManager()'),
      });
      expect(await rowsOf(orderRef)).toEqual([]);

      const retried = await store.runInTransaction(held, async (manager) => {
        await orders.insert(manager, orderRef, 'manager');
        return done('written');
      });
      expect(retried).toBe('written');
      expect(await rowsOf(orderRef)).toEqual([`${orderRef}:manager`]);
    },
  );

  it('fails the call even when the work swallows the refusal and returns', async () => {
    const orderRef = randomUUID();
    let caught: unknown;
    const refused = store.runInTransaction(await lease(), async (manager) => {
      await orders.insert(manager, orderRef, 'manager');
      await orders.insert(dataSource.manager, `${orderRef}-x`, 'outside').catch((error) => {
        caught = error;
      });
      return done('looks fine');
    });
    await expect(refused).rejects.toBeInstanceOf(WriteOutsideTransactionError);
    expect(caught).toBeInstanceOf(WriteOutsideTransactionError);
    expect(await rowsOf(orderRef)).toEqual([]);
  });

  it('lets reads through on any connection and repository, and nested manager transactions commit with the call', async () => {
    const orderRef = randomUUID();
    await orders.insert(dataSource.manager, `${orderRef}-seen`, 'before');
    const result = await store.runInTransaction(await lease(), async (manager) => {
      const before = (await orders.rows()).filter((row) => row.startsWith(orderRef));
      const records = await dataSource.getRepository('IdempotencyRecord').count();
      await manager.transaction((nested: EntityManager) =>
        orders.insert(nested, orderRef, 'nested'),
      );
      return done({ before, records });
    });
    expect(result.before).toEqual([`${orderRef}-seen:before`]);
    expect(result.records).toBeGreaterThan(0);
    expect(await rowsOf(orderRef)).toEqual([`${orderRef}-seen:before`, `${orderRef}:nested`]);
  });

  it('refuses writes on another DataSource guarded with guardTransactionalWrites', async () => {
    const business = guardTransactionalWrites(await database.connect(2));
    const orderRef = randomUUID();
    const refused = store.runInTransaction(await lease(), async () => {
      await new OrdersTable(business).insert(business.manager, orderRef, 'other-source');
      return done(undefined);
    });
    await expect(refused).rejects.toMatchObject({ statement: 'INSERT' });
    expect(await rowsOf(orderRef)).toEqual([]);
  });

  it('installs once: guarding again, or a second store, wraps nothing twice', async () => {
    const wrapped = dataSource.createQueryRunner;
    expect(guardTransactionalWrites(dataSource)).toBe(dataSource);
    new TypeOrmIdempotencyRecordStore(dataSource);
    expect(dataSource.createQueryRunner).toBe(wrapped);
  });

  it('exposes the call manager to services on the same DataSource only', async () => {
    const other = await database.connect(1);
    const seen = await store.runInTransaction(await lease(), async (manager) =>
      done({
        same: activeIdempotencyManager(dataSource) === manager,
        other: activeIdempotencyManager(other),
      }),
    );
    expect(seen).toEqual({ same: true, other: undefined });
    expect(activeIdempotencyManager(dataSource)).toBeUndefined();
  });

  it('stops guarding when the call settles: a task it left behind may write afterwards', async () => {
    const orderRef = randomUUID();
    const settled = deferred();
    let late: Promise<unknown> | undefined;
    await store.runInTransaction(await lease(), async () => {
      late = settled.promise.then(() => orders.insert(dataSource.manager, orderRef, 'late'));
      return done(undefined);
    });
    settled.resolve();
    await late;
    expect(await rowsOf(orderRef)).toEqual([`${orderRef}:late`]);
  });

  if (name === 'sqlite') {
    it('outsideIdempotencyTransaction: the one SQLite connection still writes in the call transaction', async () => {
      const orderRef = randomUUID();
      const failure = new Error('declined');
      await expect(
        store.runInTransaction(await lease(), async () => {
          await outsideIdempotencyTransaction(() =>
            orders.insert(dataSource.manager, orderRef, 'audit'),
          );
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await rowsOf(orderRef)).toEqual([]);
    });
  } else {
    it('outsideIdempotencyTransaction lets a write through that commits even though the call fails', async () => {
      const orderRef = randomUUID();
      const failure = new Error('declined');
      await expect(
        store.runInTransaction(await lease(), async () => {
          await outsideIdempotencyTransaction(() =>
            orders.insert(dataSource.manager, orderRef, 'audit'),
          );
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await rowsOf(orderRef)).toEqual([`${orderRef}:audit`]);
    });

    it("does not refuse the store's own statements made inside a call (a nested protected method)", async () => {
      const inner = `guard-inner:${randomUUID()}`;
      const outcome = await store.runInTransaction(await lease(), async () =>
        done(await store.begin(inner, digest, timing)),
      );
      expect(outcome.kind).toBe('acquired');
      expect(await store.begin(inner, digest, timing)).toMatchObject({ kind: 'in_progress' });
    });
  }
});
