import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LeaseLostError,
  type BeginOutcome,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { deferred, track } from './support/deferred.js';
import { OrdersTable } from './support/orders-table.js';
import { FakeClock, recordDatabases, recordsTable } from './support/record-databases.js';

const timing = { leaseTtlMs: 5_000, retentionMs: 60_000 };
const digest = 'd'.repeat(64);

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

function orderCreated(orderRef: string, writtenBy: string): StoredResponse {
  return {
    status: 201,
    headers: { 'content-type': 'application/json' },
    body: { kind: 'json', value: { orderRef, writtenBy } },
  };
}

const newIdentity = (label: string) => `shop:${label}:v1:tenant-1:${randomUUID()}`;

describe.each(recordDatabases())('runInTransaction on %s', (name, database) => {
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

  /** Places an order the way a handler would: write the row, answer 201. */
  function placeOrder(
    store: TypeOrmIdempotencyRecordStore,
    lease: RecordLease,
    orderRef: string,
    writer: string,
  ) {
    return store.runInTransaction(lease, async (manager) => {
      await orders.insert(manager, orderRef, writer);
      return { response: orderCreated(orderRef, writer), result: `${orderRef}:${writer}` };
    });
  }

  it('commits the work and the completed record together and returns the work result', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock: new FakeClock() });
    const identity = newIdentity('commit');
    const orderRef = randomUUID();
    const lease = acquired(await store.begin(identity, digest, timing));

    expect(await placeOrder(store, lease, orderRef, 'a')).toBe(`${orderRef}:a`);

    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
      `${orderRef}:a`,
    ]);
    expect(await store.begin(identity, digest, timing)).toEqual({
      kind: 'replay',
      response: orderCreated(orderRef, 'a'),
    });
  });

  it('a work that throws rolls its writes back and leaves the record in progress under the lease', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock: new FakeClock() });
    const identity = newIdentity('throws');
    const orderRef = randomUUID();
    const lease = acquired(await store.begin(identity, digest, timing));
    const failure = new Error('payment provider said no');

    await expect(
      store.runInTransaction(lease, async (manager) => {
        await orders.insert(manager, orderRef, 'a');
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([]);
    expect(await store.begin(identity, digest, timing)).toMatchObject({ kind: 'in_progress' });
    expect(await placeOrder(store, lease, orderRef, 'a')).toBe(`${orderRef}:a`);
  });

  it('an owner whose lease was taken over gets LeaseLostError, and none of its writes commit', async () => {
    const clock = new FakeClock();
    const oldOwner = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
    const newOwner = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
    const identity = newIdentity('lost');
    const orderRef = randomUUID();
    const old = acquired(await oldOwner.begin(identity, digest, timing));
    clock.advance(timing.leaseTtlMs + 1);
    const current = acquired(await newOwner.begin(identity, digest, timing));
    expect(current.fence).toBe(old.fence + 1);

    let oldWorkRuns = 0;
    await expect(
      oldOwner.runInTransaction(old, async (manager) => {
        oldWorkRuns += 1;
        await orders.insert(manager, orderRef, 'old');
        return { response: orderCreated(orderRef, 'old'), result: undefined };
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // The lease is checked before the work runs: a lost lease costs no work at all.
    expect(oldWorkRuns).toBe(0);
    await placeOrder(newOwner, current, orderRef, 'new');

    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
      `${orderRef}:new`,
    ]);
    expect(await oldOwner.begin(identity, digest, timing)).toEqual({
      kind: 'replay',
      response: orderCreated(orderRef, 'new'),
    });
  });

  if (name === 'mariadb') {
    it('a takeover while the work runs wins; the old owner gets LeaseLostError and its business row is rolled back', async () => {
      const clock = new FakeClock();
      const oldOwner = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const newOwner = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const identity = newIdentity('takeover-mid-work');
      const orderRef = randomUUID();
      const old = acquired(await oldOwner.begin(identity, digest, timing));
      const written = deferred();
      const proceed = deferred();
      const oldRun = track(
        oldOwner.runInTransaction(old, async (manager) => {
          await orders.insert(manager, orderRef, 'old');
          written.resolve();
          await proceed.promise;
          return { response: orderCreated(orderRef, 'old'), result: undefined };
        }),
      );
      await written.promise;
      clock.advance(timing.leaseTtlMs + 1);

      const current = acquired(await newOwner.begin(identity, digest, timing));
      expect(current.fence).toBe(old.fence + 1);
      proceed.resolve();

      await expect(oldRun.promise).rejects.toBeInstanceOf(LeaseLostError);
      expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([]);
      await placeOrder(newOwner, current, orderRef, 'new');
      expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
        `${orderRef}:new`,
      ]);
    });
  } else {
    it('a takeover while the work runs waits for the commit, then replays the owner response', async () => {
      const clock = new FakeClock();
      const ownerSource = await database.connect(1);
      const owner = new TypeOrmIdempotencyRecordStore(ownerSource, { clock });
      const latecomer = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const identity = newIdentity('takeover-waits');
      const orderRef = randomUUID();
      const lease = acquired(await owner.begin(identity, digest, timing));
      const written = deferred();
      const proceed = deferred();
      const ownerRun = track(
        owner.runInTransaction(lease, async (manager) => {
          await orders.insert(manager, orderRef, 'owner');
          written.resolve();
          await proceed.promise;
          return { response: orderCreated(orderRef, 'owner'), result: 'done' };
        }),
      );
      await written.promise;
      clock.advance(timing.leaseTtlMs + 1);

      const takeover = track(latecomer.begin(identity, digest, timing));
      await blockedOnTheRecord(takeover.settled);
      expect(takeover.settled()).toBe(false);
      proceed.resolve();

      expect(await ownerRun.promise).toBe('done');
      expect(await takeover.promise).toEqual({
        kind: 'replay',
        response: orderCreated(orderRef, 'owner'),
      });
      expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
        `${orderRef}:owner`,
      ]);
    });
  }

  if (name === 'postgres') {
    it('purgeExpired skips, without waiting, a record whose transaction is still running', async () => {
      const clock = new FakeClock();
      const owner = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const purger = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const short = { leaseTtlMs: 1_000, retentionMs: 1_000 };
      // This run's own schema: emptied so the purge count below is exact.
      await dataSource.query(`DELETE FROM ${recordsTable(dataSource)}`);
      const abandoned = newIdentity('purge-abandoned');
      acquired(await purger.begin(abandoned, digest, short));
      const identity = newIdentity('purge-running');
      const orderRef = randomUUID();
      const lease = acquired(await owner.begin(identity, digest, short));
      const written = deferred();
      const proceed = deferred();
      const ownerRun = owner.runInTransaction(lease, async (manager) => {
        await orders.insert(manager, orderRef, 'owner');
        written.resolve();
        await proceed.promise;
        return { response: orderCreated(orderRef, 'owner'), result: 'done' };
      });
      await written.promise;
      clock.advance(short.leaseTtlMs + 1);

      let purged = 0;
      for (
        let batch = await purger.purgeExpired(100);
        batch > 0;
        batch = await purger.purgeExpired(100)
      ) {
        purged += batch;
      }
      proceed.resolve();

      expect(await ownerRun).toBe('done');
      expect(purged).toBe(1);
      expect(await purger.begin(abandoned, digest, short)).toMatchObject({ kind: 'acquired' });
      expect(await purger.begin(identity, digest, short)).toEqual({
        kind: 'replay',
        response: orderCreated(orderRef, 'owner'),
      });
    });
  }

  /**
   * Returns once the pending takeover is provably stuck behind the owner's lock: on PostgreSQL a
   * backend of this run waits for a lock on the records table; on SQLite (no lock view) the
   * takeover has had many retries and still not settled.
   */
  async function blockedOnTheRecord(settled: () => boolean): Promise<void> {
    if (name === 'postgres') {
      const schema = dataSource.driver.schema ?? '';
      for (;;) {
        const [{ waiting }] = await dataSource.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [`%"${schema}"."oncely_idempotency_record"%`],
        );
        if (waiting > 0 || settled()) return;
        await sleep(10);
      }
    }
    await sleep(200);
  }

  it('10 concurrent duplicates on 10 connections write exactly one business row and all get its response', async () => {
    const clock = new FakeClock();
    const stores = await Promise.all(
      Array.from(
        { length: 10 },
        async () => new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock }),
      ),
    );
    const identity = newIdentity('duplicates');
    const orderRef = randomUUID();
    let executions = 0;

    const request = async (store: TypeOrmIdempotencyRecordStore, index: number) => {
      for (;;) {
        const outcome = await store.begin(identity, digest, timing);
        if (outcome.kind === 'replay') return outcome.response;
        if (outcome.kind === 'acquired') {
          return store.runInTransaction(outcome.lease, async (manager) => {
            executions += 1;
            await orders.insert(manager, orderRef, `request-${index}`);
            const response = orderCreated(orderRef, `request-${index}`);
            return { response, result: response };
          });
        }
        if (outcome.kind === 'mismatch') throw new Error('unexpected mismatch');
        await sleep(5);
      }
    };
    const responses = await Promise.all(stores.map(request));

    expect(executions).toBe(1);
    const rows = (await orders.rows()).filter((row) => row.startsWith(orderRef));
    expect(rows).toHaveLength(1);
    const writer = rows[0]!.slice(orderRef.length + 1);
    expect(responses).toEqual(Array.from({ length: 10 }, () => orderCreated(orderRef, writer)));
  });

  it('the business unique constraint stops a second row even when two leases run the work', async () => {
    const clock = new FakeClock();
    const first = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
    const second = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
    const orderRef = randomUUID();
    const one = acquired(await first.begin(newIdentity('double-a'), digest, timing));
    const other = acquired(await second.begin(newIdentity('double-b'), digest, timing));

    const results = await Promise.allSettled([
      placeOrder(first, one, orderRef, 'a'),
      placeOrder(second, other, orderRef, 'b'),
    ]);

    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toHaveLength(1);
  });
});
