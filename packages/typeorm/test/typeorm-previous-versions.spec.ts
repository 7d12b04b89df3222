import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaseLostError, type BeginOutcome, type RecordLease } from '@oncely/core';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { OrdersTable } from './support/orders-table.js';
import { FakeClock, recordDatabases } from './support/record-databases.js';

const timing = { leaseTtlMs: 5_000, retentionMs: 60_000 };
const digest = 'd'.repeat(64);

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

/** One request's identity under version `v1` and under `v2`. */
function versions(label: string): { v1: string; v2: string } {
  const id = randomUUID();
  return { v1: `shop:${label}:v1:tenant-1:${id}`, v2: `shop:${label}:v2:tenant-1:${id}` };
}

describe.each(recordDatabases())(
  'TypeOrmIdempotencyRecordStore previous versions on %s',
  (_, database) => {
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

    it('of 20 concurrent begins from 20 connections on two versions, each listing the other, at most one acquires', async () => {
      const clock = new FakeClock();
      const sources = await Promise.all(Array.from({ length: 20 }, () => database.connect(1)));
      const stores = sources.map((source) => new TypeOrmIdempotencyRecordStore(source, { clock }));
      const { v1, v2 } = versions('race');

      const outcomes = await Promise.all(
        stores.map((store, i) =>
          store.begin(i % 2 ? v1 : v2, digest, {
            ...timing,
            previousIdentities: [i % 2 ? v2 : v1],
          }),
        ),
      );

      const winners = outcomes.filter(({ kind }) => kind === 'acquired').length;
      expect(winners).toBeLessThanOrEqual(1);
      expect(outcomes.filter(({ kind }) => kind === 'in_progress')).toHaveLength(20 - winners);
      const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
      const next = await store.begin(v2, digest, { ...timing, previousIdentities: [v1] });
      expect(next.kind).toBe(winners === 1 ? 'in_progress' : 'acquired');
    });

    it('a transactional holder of an abandoned previous record rolls back once the new version claims it', async () => {
      const clock = new FakeClock();
      const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
      const { v1, v2 } = versions('fenced');
      const stalled = acquired(await store.begin(v1, digest, timing));
      clock.advance(timing.leaseTtlMs + 1);

      acquired(await store.begin(v2, digest, { ...timing, previousIdentities: [v1] }));
      const late = store.runInTransaction(stalled, async (manager) => {
        await orders.insert(manager, `late-${v1}`.slice(0, 64), 'v1');
        return { response: { status: 201, headers: {}, body: { kind: 'empty' } }, result: 'v1' };
      });

      await expect(late).rejects.toBeInstanceOf(LeaseLostError);
      expect((await orders.rows()).filter((row) => row.endsWith(':v1'))).toEqual([]);
    });

    it('a previous record completed while the new version checks it: exactly one of the two runs', async () => {
      const clock = new FakeClock();
      const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
      const newNode = new TypeOrmIdempotencyRecordStore(await database.connect(1), { clock });
      const { v1, v2 } = versions('photo-finish');
      const orderRef = v1.slice(-36);
      const holder = acquired(await store.begin(v1, digest, timing));
      let enter!: () => void;
      const entered = new Promise<void>((resolve) => (enter = resolve));
      let finish!: () => void;
      const finishing = new Promise<void>((resolve) => (finish = resolve));
      const running = store.runInTransaction(holder, async (manager) => {
        await orders.insert(manager, orderRef, 'v1');
        enter();
        await finishing;
        return { response: { status: 201, headers: {}, body: { kind: 'empty' } }, result: 'v1' };
      });
      await entered;
      clock.advance(timing.leaseTtlMs + 1);

      const checking = newNode.begin(v2, digest, { ...timing, previousIdentities: [v1] });
      // Gives the new version's statements time to reach the row while the transaction holds it.
      await sleep(200);
      finish();
      const [first, second] = await Promise.allSettled([running, checking]);

      const committed = (await orders.rows()).filter((row) => row.startsWith(`${orderRef}:`));
      if (second.status !== 'fulfilled') throw second.reason;
      if (second.value.kind === 'replay') {
        expect(first.status).toBe('fulfilled');
        expect(second.value.previousIdentity).toBe(v1);
        expect(committed).toEqual([`${orderRef}:v1`]);
      } else {
        expect(second.value.kind).toBe('acquired');
        expect(first.status === 'rejected' && first.reason).toBeInstanceOf(LeaseLostError);
        expect(committed).toEqual([]);
      }
    });
  },
);
