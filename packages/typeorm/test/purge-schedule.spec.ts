import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOncelyEngine, type BeginOutcome, type StoredResponse } from '@oncely/core';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { FakeClock, recordDatabases, recordsTable } from './support/record-databases.js';

const created: StoredResponse = { status: 201, headers: {}, body: { kind: 'empty' } };
const short = { leaseTtlMs: 1_000, retentionMs: 2_000 };
const long = { leaseTtlMs: 1_000, retentionMs: 600_000 };
const purge = { every: 20, batch: 2 };

/** Waits until `check` holds: a wait for a state, never an assertion on speed. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the awaited state was never reached');
    await sleep(10);
  }
}

/** Counts what each purge of `store` deleted, in order. */
function countPurges(store: TypeOrmIdempotencyRecordStore): number[] {
  const deleted: number[] = [];
  const purgeExpired = store.purgeExpired.bind(store);
  store.purgeExpired = async (batchSize) => {
    const count = await purgeExpired(batchSize);
    deleted.push(count);
    return count;
  };
  return deleted;
}

describe.each(recordDatabases())('the purge schedule on %s', (_, database) => {
  let dataSource: DataSource;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });

  afterAll(() => database.tearDown());

  beforeEach(() => dataSource.query(`DELETE FROM ${recordsTable(dataSource)}`));

  async function rowCount(): Promise<number> {
    const [row] = await dataSource.query<{ n: number | string }[]>(
      `SELECT COUNT(*) AS ${dataSource.driver.escape('n')} FROM ${recordsTable(dataSource)}`,
    );
    return Number(row?.n);
  }

  /** Completed records kept for `timing.retentionMs`. */
  async function seed(clock: FakeClock, count: number, timing: typeof short): Promise<void> {
    const seeder = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    for (let index = 0; index < count; index += 1) {
      const outcome: BeginOutcome = await seeder.begin(
        `shop:purge:v1:t:${randomUUID()}`,
        'a'.repeat(64),
        timing,
      );
      if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
      await seeder.complete(outcome.lease, created);
    }
  }

  it('deletes expired records in batches from the engine start, and stops on close', async () => {
    const clock = new FakeClock();
    await seed(clock, 5, short);
    await seed(clock, 2, long);
    clock.advance(3_000);
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock, purge });
    const deleted = countPurges(store);
    const engine = createOncelyEngine({ namespace: 'shop', store });
    expect(deleted).toEqual([]);

    await engine.start();
    await until(async () => deleted.length >= 4);

    // The first purge works off the backlog in batches, the next ones find nothing.
    expect(deleted.slice(0, 3)).toEqual([2, 2, 1]);
    expect(deleted.slice(3).every((count) => count === 0)).toBe(true);
    expect(await rowCount()).toBe(2);

    await engine.close();
    const purgesBeforeClose = deleted.length;
    await seed(clock, 3, short);
    clock.advance(3_000);
    await sleep(purge.every * 10);
    expect(deleted.length).toBe(purgesBeforeClose);
    expect(await rowCount()).toBe(5);
    // The DataSource was handed in: closing the engine left it open.
    expect(dataSource.isInitialized).toBe(true);
  });

  it('reports a failed purge and carries on with the next', async () => {
    const clock = new FakeClock();
    await seed(clock, 3, short);
    clock.advance(3_000);
    const failures: unknown[] = [];
    const store = new TypeOrmIdempotencyRecordStore(dataSource, {
      clock,
      purge: { ...purge, onError: (error) => failures.push(error) },
    });
    const purgeExpired = store.purgeExpired.bind(store);
    const outage = new Error('database away');
    let calls = 0;
    store.purgeExpired = (batchSize) => {
      calls += 1;
      return calls === 1 ? Promise.reject(outage) : purgeExpired(batchSize);
    };

    await store.start();
    await until(async () => (await rowCount()) === 0);
    await store.close();

    expect(failures).toEqual([outage]);
  });
});
