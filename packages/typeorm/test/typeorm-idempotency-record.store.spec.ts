import { randomUUID } from 'node:crypto';
import {
  LeaseLostError,
  type BeginOutcome,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { recordKeyHash } from '@oncely/core/adapter';
import {
  IdempotencyRecord,
  TypeOrmIdempotencyRecordStore,
  UninitializedDataSourceError,
  UnsupportedDatabaseError,
} from '@oncely/typeorm';
import { DataSource } from 'typeorm';
import { FakeClock, recordDatabases, recordsTable } from './support/record-databases.js';

const timing = { leaseTtlMs: 5_000, retentionMs: 60_000 };
const created: StoredResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/orders/77' },
  body: { kind: 'json', value: { id: 77, note: 'Grüße, 世界 👋' } },
};

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

function countKinds(outcomes: BeginOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { kind } of outcomes) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const newIdentity = (label: string) => `shop:${label}:v1:tenant-1:${randomUUID()}`;

describe.each(recordDatabases())('TypeOrmIdempotencyRecordStore on %s', (_, database) => {
  let dataSource: DataSource;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });

  afterAll(() => database.tearDown());

  /** The raw row, every column, as the database returns it. */
  async function rawRow(identity: string): Promise<Record<string, unknown> | undefined> {
    const placeholder = database.name === 'postgres' ? '$1' : '?';
    const rows: Record<string, unknown>[] = await dataSource.query(
      `SELECT * FROM ${recordsTable(dataSource)} WHERE ${dataSource.driver.escape('key_hash')} = ${placeholder}`,
      [recordKeyHash(identity)],
    );
    return rows[0];
  }

  /** `count` stores, each on its own DataSource with a single connection, all on one clock. */
  async function storesOnSeparateConnections(count: number, clock: FakeClock) {
    const dataSources = await Promise.all(Array.from({ length: count }, () => database.connect(1)));
    return dataSources.map((each) => new TypeOrmIdempotencyRecordStore(each, { clock }));
  }

  it('the migration creates exactly the table the entity describes', async () => {
    expect(await dataSource.driver.createSchemaBuilder().log()).toEqual({
      upQueries: [],
      downQueries: [],
    });
  });

  it('a record reads back through the entity with numbers as numbers', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    const identity = newIdentity('entity');
    const lease = acquired(await store.begin(identity, 'a'.repeat(64), timing));
    await store.complete(lease, created);

    const record = await dataSource
      .getRepository(IdempotencyRecord)
      .findOneByOrFail({ keyHash: lease.keyHash });

    expect(record).toMatchObject({
      key: identity,
      fingerprint: 'a'.repeat(64),
      status: 'completed',
      ownerToken: lease.ownerToken,
      fence: 1,
      leaseExpiresAt: lease.leaseExpiresAt.getTime(),
      retentionMs: timing.retentionMs,
      responseStatus: 201,
      responseBodyKind: 'json',
      createdAt: clock.now(),
      completedAt: clock.now(),
      expiresAt: clock.now() + timing.retentionMs,
    });
    expect(JSON.parse(record.responseHeaders ?? '')).toEqual(created.headers);
    expect(Buffer.from(record.responseBody ?? []).toString('utf8')).toBe(
      JSON.stringify({ id: 77, note: 'Grüße, 世界 👋' }),
    );
  });

  it('20 concurrent begins from 20 connections: one acquires, 19 are in progress, all later ones replay', async () => {
    const clock = new FakeClock();
    const stores = await storesOnSeparateConnections(20, clock);
    const identity = newIdentity('race');

    const first = await Promise.all(
      stores.map((store) => store.begin(identity, 'a'.repeat(64), timing)),
    );

    expect(countKinds(first)).toEqual({ acquired: 1, in_progress: 19 });
    const winner = first.findIndex((outcome) => outcome.kind === 'acquired');
    await stores[winner]!.complete(acquired(first[winner]!), created);

    const later = await Promise.all(
      stores.map((store) => store.begin(identity, 'a'.repeat(64), timing)),
    );
    expect(later).toEqual(
      Array.from({ length: 20 }, () => ({ kind: 'replay', response: created })),
    );
  });

  it('another digest is a mismatch and leaves the stored row untouched, in progress and completed', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    const identity = newIdentity('mismatch');
    const lease = acquired(await store.begin(identity, 'a'.repeat(64), timing));
    const inProgress = await rawRow(identity);

    expect(await store.begin(identity, 'b'.repeat(64), timing)).toEqual({ kind: 'mismatch' });
    expect(await rawRow(identity)).toEqual(inProgress);

    await store.complete(lease, created);
    const completed = await rawRow(identity);
    expect(await store.begin(identity, 'b'.repeat(64), timing)).toEqual({ kind: 'mismatch' });
    expect(await rawRow(identity)).toEqual(completed);
    expect(completed).toMatchObject({ status: 'completed', fingerprint: 'a'.repeat(64) });
  });

  it('an expired lease: of 10 concurrent takeovers from 10 connections exactly one wins, with a higher fence', async () => {
    const clock = new FakeClock();
    const stores = await storesOnSeparateConnections(10, clock);
    const identity = newIdentity('takeover');
    const old = acquired(await stores[0]!.begin(identity, 'a'.repeat(64), timing));
    clock.advance(timing.leaseTtlMs + 1);

    const outcomes = await Promise.all(
      stores.map((store) => store.begin(identity, 'a'.repeat(64), timing)),
    );

    expect(countKinds(outcomes)).toEqual({ acquired: 1, in_progress: 9 });
    const winner = acquired(outcomes.find((outcome) => outcome.kind === 'acquired')!);
    expect(winner.fence).toBe(old.fence + 1);
    expect(await rawRow(identity)).toMatchObject({
      owner_token: winner.ownerToken,
      status: 'in_progress',
    });
    await expect(stores[1]!.complete(old, created)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await rawRow(identity)).toMatchObject({
      owner_token: winner.ownerToken,
      status: 'in_progress',
    });

    await stores[2]!.complete(winner, created);
    expect(await stores[3]!.begin(identity, 'a'.repeat(64), timing)).toEqual({
      kind: 'replay',
      response: created,
    });
  });

  it('an expired completed record: of 10 concurrent begins exactly one acquires it again', async () => {
    const clock = new FakeClock();
    const stores = await storesOnSeparateConnections(10, clock);
    const identity = newIdentity('retained');
    await stores[0]!.complete(
      acquired(await stores[0]!.begin(identity, 'a'.repeat(64), timing)),
      created,
    );
    clock.advance(timing.retentionMs + 1);

    const outcomes = await Promise.all(
      stores.map((store) => store.begin(identity, 'b'.repeat(64), timing)),
    );

    expect(countKinds(outcomes)).toEqual({ acquired: 1, in_progress: 9 });
    expect(await rawRow(identity)).toMatchObject({
      status: 'in_progress',
      fingerprint: 'b'.repeat(64),
      response_body: null,
      completed_at: null,
    });
  });

  it('purgeExpired deletes only expired rows, in batches, and no row of a live record', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    await dataSource.query(`DELETE FROM ${recordsTable(dataSource)}`);
    const short = { leaseTtlMs: 1_000, retentionMs: 2_000 };
    const expired: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const identity = newIdentity('purge-completed');
      await store.complete(acquired(await store.begin(identity, 'a'.repeat(64), short)), created);
      expired.push(identity);
    }
    const abandoned = newIdentity('purge-abandoned');
    acquired(await store.begin(abandoned, 'a'.repeat(64), short));
    expired.push(abandoned);
    const live = [newIdentity('purge-live-completed'), newIdentity('purge-live-working')];
    await store.complete(acquired(await store.begin(live[0]!, 'a'.repeat(64), timing)), created);
    const working = acquired(await store.begin(live[1]!, 'a'.repeat(64), short));
    clock.advance(1_500);
    expect(await store.renew(working, timing.leaseTtlMs)).toBe(true);
    clock.advance(1_000);

    const batches = [
      await store.purgeExpired(2),
      await store.purgeExpired(2),
      await store.purgeExpired(2),
    ];
    expect(batches).toEqual([2, 2, 1]);
    expect(await store.purgeExpired(2)).toBe(0);

    for (const identity of expired) expect(await rawRow(identity)).toBeUndefined();
    const rows: { key: string }[] = await dataSource.query(
      `SELECT ${dataSource.driver.escape('key')} AS ${dataSource.driver.escape('key')} FROM ${recordsTable(dataSource)}`,
    );
    expect(rows.map((row) => row.key).sort()).toEqual([...live].sort());
  });

  async function hasRecordsTable(): Promise<boolean> {
    const runner = dataSource.createQueryRunner();
    try {
      return await runner.hasTable('oncely_idempotency_record');
    } finally {
      await runner.release();
    }
  }

  it('stamps the owner on the row, and a record of another owner stays as it was', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const identity = newIdentity('owner-row');
    const lease = acquired(
      await store.begin(identity, 'a'.repeat(64), { ...timing, owner: 'orders-api' }),
    );
    await store.complete(lease, created);
    const completed = await rawRow(identity);
    expect(completed).toMatchObject({ owner: 'orders-api' });

    const foreign = await store.begin(identity, 'b'.repeat(64), {
      ...timing,
      owner: 'billing-api',
    });

    expect(foreign).toEqual({ kind: 'foreign_owner', owner: 'orders-api' });
    expect(await rawRow(identity)).toEqual(completed);
  });

  it('a record written by an app naming no service replays for any service', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const identity = newIdentity('no-service');
    const lease = acquired(await store.begin(identity, 'a'.repeat(64), timing));
    await store.complete(lease, created);

    expect(await rawRow(identity)).toMatchObject({ owner: null });
    for (const owner of ['orders-api', 'billing-api']) {
      const replay = await store.begin(identity, 'a'.repeat(64), { ...timing, owner });
      expect(replay).toEqual({ kind: 'replay', response: expect.anything() });
    }
  });

  it('the migration reverts cleanly, dropping both tables, and applies again', async () => {
    await dataSource.undoLastMigration();
    expect(await hasRecordsTable()).toBe(false);
    const runner = dataSource.createQueryRunner();
    try {
      expect(await runner.hasTable('oncely_claim')).toBe(false);
    } finally {
      await runner.release();
    }

    await dataSource.runMigrations();

    expect(await hasRecordsTable()).toBe(true);
    expect(await dataSource.driver.createSchemaBuilder().log()).toEqual({
      upQueries: [],
      downQueries: [],
    });
  });
});

describe('TypeOrmIdempotencyRecordStore set-up errors', () => {
  it('refuses a database type it does not support', () => {
    const oracle = { options: { type: 'oracle' } } as unknown as DataSource;

    expect(() => new TypeOrmIdempotencyRecordStore(oracle)).toThrow(UnsupportedDatabaseError);
  });

  it('says so when the DataSource is not initialised yet', async () => {
    const store = new TypeOrmIdempotencyRecordStore(
      new DataSource({ type: 'better-sqlite3', database: ':memory:' }),
    );

    await expect(store.begin('shop:x:v1:t:1', 'd'.repeat(64), timing)).rejects.toBeInstanceOf(
      UninitializedDataSourceError,
    );
  });
});
