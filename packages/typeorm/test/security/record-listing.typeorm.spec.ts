import { LeaseLostError, OncelyAdmin, type RecordSummary, type StoredResponse } from '@oncely/core';
import { TypeOrmIdempotencyRecordAdmin, TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { FakeClock, recordDatabases } from '../support/record-databases.js';

const digest = 'e'.repeat(64);
const options = { leaseTtlMs: 10_000, retentionMs: 60_000, owner: 'shop-api' };
const response: StoredResponse = { status: 201, headers: {}, body: { kind: 'json', value: 1 } };

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe.each(recordDatabases())('record listing and deletion on %s', (_name, database) => {
  let dataSource: DataSource;
  let clock: FakeClock;
  let store: TypeOrmIdempotencyRecordStore;
  let admin: OncelyAdmin;

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });
  afterAll(() => database.tearDown());
  beforeEach(() => {
    clock = new FakeClock();
    store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    admin = new OncelyAdmin(store, {
      admin: new TypeOrmIdempotencyRecordAdmin(dataSource, clock),
      coordinator: 'none',
    });
  });

  it('lists exactly the live records of an operation in batches, wildcards taken literally', async () => {
    const identities = Array.from({ length: 23 }, (_, i) => `list:pay_1:v1:t:${i}`);
    for (const [i, identity] of identities.entries()) {
      const begun = await store.begin(identity, digest, options);
      if (begun.kind !== 'acquired') throw new Error(begun.kind);
      if (i % 3 === 0) await store.complete(begun.lease, response);
    }
    await store.begin('list:pay_1:v2:t:0', digest, { ...options, owner: undefined });
    // `_` and `%` would match these if they were wildcards.
    await store.begin('list:payX1:v1:t:0', digest, options);
    await store.begin('list:pay_1%:v1:t:0', digest, options);

    const v1 = await collect(admin.listRecords('list:pay_1:v1', { batchSize: 5 }));
    expect(v1.map((record) => record.identity).sort()).toEqual([...identities].sort());
    expect(v1.filter((record) => record.kind === 'completed')).toHaveLength(8);
    expect(v1.find((record) => record.identity === identities[1])).toEqual<RecordSummary>({
      identity: identities[1]!,
      keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
      kind: 'in_progress',
      owner: 'shop-api',
      expiresAt: new Date(clock.now() + 10_000),
    });
    const all = await collect(admin.listRecords('list:pay_1'));
    expect(all).toHaveLength(24);
    expect(all.find((record) => record.identity === 'list:pay_1:v2:t:0')).not.toHaveProperty(
      'owner',
    );
    expect(await admin.inspect(identities[0]!)).toMatchObject({
      kind: 'completed',
      owner: 'shop-api',
    });

    clock.advance(10_000);
    expect(await collect(admin.listRecords('list:pay_1:v1'))).toHaveLength(8);
  });

  it('deletes a record whatever its state: its holder cannot confirm, the next request runs', async () => {
    const held = await store.begin('del:pay:v1:t:held', digest, options);
    if (held.kind !== 'acquired') throw new Error(held.kind);
    const done = await store.begin('del:pay:v1:t:done', digest, options);
    if (done.kind !== 'acquired') throw new Error(done.kind);
    await store.complete(done.lease, response);

    expect(await admin.purge('del:pay:v1:t:done:abc123')).toEqual({ records: 1, flights: 0 });
    expect((await store.begin('del:pay:v1:t:done', digest, options)).kind).toBe('acquired');
    expect(await admin.purge('del:pay:v1')).toEqual({ records: 2, flights: 0 });
    await expect(store.complete(held.lease, response)).rejects.toThrow(LeaseLostError);
    expect((await store.begin('del:pay:v1:t:held', digest, options)).kind).toBe('acquired');
    expect(await admin.purge('del:pay:v1:t:gone')).toEqual({ records: 0, flights: 0 });
  });
});
