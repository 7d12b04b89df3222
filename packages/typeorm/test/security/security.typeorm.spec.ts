import { randomBytes, randomUUID } from 'node:crypto';
import { LeaseLostError, OncelyAdmin, SealedDataError, type StoredResponse } from '@oncely/core';
import {
  EncryptedIdempotencyRecordStore,
  isTransactionalRecordStore,
  recordKeyHash,
} from '@oncely/core/adapter';
import { TypeOrmIdempotencyRecordAdmin, TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource } from 'typeorm';
import { FakeClock, recordDatabases, recordsTable } from '../support/record-databases.js';

const k1 = { id: 'k1', secret: randomBytes(32) };
const k2 = { id: 'k2', secret: randomBytes(32) };
const digest = 'f'.repeat(64);
const options = { leaseTtlMs: 10_000, retentionMs: 60_000 };
const response: StoredResponse = {
  status: 201,
  headers: { location: '/payments/pay-secret-1' },
  body: { kind: 'json', value: { pan: '4111111111111111', amount: '100.00' } },
};

describe.each(recordDatabases())('security features on %s', (name, database) => {
  let dataSource: DataSource;
  const identity = () => `shop:pay:v1:t-1:${randomUUID()}`;
  const sql = (text: string) => {
    if (name !== 'postgres') return text;
    let i = 0;
    return text.replace(/\?/g, () => `$${++i}`);
  };
  const rawRow = async (id: string) => {
    const [row] = await dataSource.query<
      { response_headers: string; response_body: Buffer; response_status: number }[]
    >(
      sql(
        `SELECT response_headers, response_body, response_status FROM ${recordsTable(dataSource)} WHERE key_hash = ?`,
      ),
      [recordKeyHash(id)],
    );
    return row!;
  };

  beforeAll(async () => {
    await database.setUp();
    dataSource = await database.connect();
  });

  afterAll(async () => {
    await database.tearDown();
  });

  it('keeps only ciphertext in the response columns, and replays the response', async () => {
    const store = new EncryptedIdempotencyRecordStore(
      new TypeOrmIdempotencyRecordStore(dataSource),
      {
        keys: [k1],
      },
    );
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.complete(begun.lease, response);
    const row = await rawRow(id);
    expect(row.response_headers).toBe('{}');
    const body = Buffer.from(row.response_body);
    expect(body.subarray(0, 3).toString()).toBe('OE1');
    expect(body.includes(Buffer.from('4111111111111111'))).toBe(false);
    expect(body.includes(Buffer.from('pay-secret-1'))).toBe(false);
    expect(await store.begin(id, digest, options)).toEqual({ kind: 'replay', response });
  });

  it('seals inside runInTransaction too, and rotates', async () => {
    const inner = new TypeOrmIdempotencyRecordStore(dataSource);
    const store = new EncryptedIdempotencyRecordStore(inner, { keys: [k1] });
    expect(isTransactionalRecordStore(store)).toBe(true);
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.runInTransaction!(begun.lease, async () => ({ response, result: 1 }));
    expect(Buffer.from((await rawRow(id)).response_body).includes(Buffer.from('4111'))).toBe(false);
    const rotated = new EncryptedIdempotencyRecordStore(inner, { keys: [k2, k1] });
    expect(await rotated.begin(id, digest, options)).toEqual({ kind: 'replay', response });
    const dropped = new EncryptedIdempotencyRecordStore(inner, { keys: [k2] });
    await expect(dropped.begin(id, digest, options)).rejects.toThrow(
      expect.objectContaining({ failure: 'unknown_key' }),
    );
  });

  it('refuses an altered ciphertext or status with a typed error', async () => {
    const store = new EncryptedIdempotencyRecordStore(
      new TypeOrmIdempotencyRecordStore(dataSource),
      {
        keys: [k1],
      },
    );
    const id = identity();
    const begun = await store.begin(id, digest, options);
    if (begun.kind !== 'acquired') throw new Error(begun.kind);
    await store.complete(begun.lease, response);
    const body = Buffer.from((await rawRow(id)).response_body);
    body.writeUInt8(body.readUInt8(40) ^ 0x10, 40);
    await dataSource.query(
      sql(`UPDATE ${recordsTable(dataSource)} SET response_body = ? WHERE key_hash = ?`),
      [body, recordKeyHash(id)],
    );
    await expect(store.begin(id, digest, options)).rejects.toThrow(SealedDataError);
    body.writeUInt8(body.readUInt8(40) ^ 0x10, 40);
    await dataSource.query(
      sql(
        `UPDATE ${recordsTable(dataSource)} SET response_body = ?, response_status = 200 WHERE key_hash = ?`,
      ),
      [body, recordKeyHash(id)],
    );
    await expect(store.begin(id, digest, options)).rejects.toThrow(
      expect.objectContaining({ failure: 'tampered' }),
    );
  });

  it('administers records: inspect, force-release with a higher fence next, purge', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(dataSource, { clock });
    const admin = new OncelyAdmin(store, {
      admin: new TypeOrmIdempotencyRecordAdmin(dataSource, clock),
      coordinator: 'none',
    });
    const id = identity();
    expect((await admin.inspect(id)).kind).toBe('absent');
    const stuck = await store.begin(id, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    expect(await admin.inspect(id)).toMatchObject({
      kind: 'in_progress',
      fence: stuck.lease.fence,
    });
    expect(await admin.forceRelease(id)).toEqual({
      kind: 'released',
      fence: stuck.lease.fence,
      leases: [],
    });
    await expect(store.complete(stuck.lease, response)).rejects.toThrow(LeaseLostError);
    const next = await store.begin(id, digest, options);
    if (next.kind !== 'acquired') throw new Error(next.kind);
    expect(next.lease.fence).toBe(stuck.lease.fence + 1);
    await store.complete(next.lease, response);
    expect(await admin.inspect(id)).toMatchObject({ kind: 'completed', response });
    expect(await admin.forceRelease(id)).toEqual({ kind: 'completed', leases: [] });
    clock.advance(60_001);
    expect((await admin.inspect(id)).kind).toBe('absent');
    // The four records of this suite, all past their retention on this clock.
    expect(await admin.purgeExpired(2)).toBe(4);
    const [left] = await dataSource.query<{ n: number | string }[]>(
      `SELECT COUNT(*) AS n FROM ${recordsTable(dataSource)}`,
    );
    expect(Number(left!.n)).toBe(0);
  });
  it('force-releases a key while its transactional work holds the row, without waiting for it', async () => {
    const store = new TypeOrmIdempotencyRecordStore(dataSource);
    const admin = new OncelyAdmin(store, {
      admin: new TypeOrmIdempotencyRecordAdmin(dataSource),
      coordinator: 'none',
    });
    const effects = `oncely_release_effects_${randomUUID().slice(0, 8)}`;
    await dataSource.query(`CREATE TABLE ${effects} (ref varchar(64) NOT NULL)`);
    const id = identity();
    const stuck = await store.begin(id, digest, options);
    if (stuck.kind !== 'acquired') throw new Error(stuck.kind);
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const work = store.runInTransaction(stuck.lease, async (manager) => {
      await manager.query(sql(`INSERT INTO ${effects} (ref) VALUES (?)`), [id]);
      wrote();
      await blocked;
      return { response, result: 'done' };
    });
    const outcome = work.then(
      () => 'completed',
      (error: unknown) => (error instanceof Error ? error.name : String(error)),
    );
    await written;

    // Awaited while the work is still blocked: the release must not wait for its transaction.
    expect(await admin.forceRelease(id)).toMatchObject({ kind: 'released' });
    unblock();
    const rows = async () => {
      const [row] = await dataSource.query<{ n: number | string }[]>(
        `SELECT COUNT(*) AS n FROM ${effects}`,
      );
      return Number(row?.n);
    };
    const next = await store.begin(id, digest, options);
    if (name === 'sqlite') {
      // One connection: the release ran inside the work's transaction and rolled back with it.
      expect(await outcome).toBe('LeaseLostError');
      expect(next.kind).toBe('in_progress');
    } else {
      // PostgreSQL ended the work's session; on MariaDB its fenced completion found a new owner.
      expect(await outcome).toBe(
        name === 'postgres' ? 'RecordStoreUnavailableError' : 'LeaseLostError',
      );
      expect(next.kind === 'acquired' && next.lease.fence).toBe(stuck.lease.fence + 1);
    }
    expect(await rows()).toBe(0);
    await dataSource.query(`DROP TABLE ${effects}`);
  });
});
