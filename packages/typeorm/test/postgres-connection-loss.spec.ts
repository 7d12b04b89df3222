import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LeaseLostError,
  RecordStoreUnavailableError,
  type BeginOutcome,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { recordKeyHash } from '@oncely/core/adapter';
import { TypeOrmIdempotencyRecordStore } from '@oncely/typeorm';
import type { DataSource, QueryRunner } from 'typeorm';
import { deferred } from './support/deferred.js';
import { OrdersTable } from './support/orders-table.js';
import { FakeClock, recordDatabases, recordsTable } from './support/record-databases.js';

const timing = { leaseTtlMs: 5_000, retentionMs: 60_000 };
const digest = 'd'.repeat(64);
const done: StoredResponse = {
  status: 200,
  headers: {},
  body: { kind: 'json', value: { ok: true } },
};

function acquired(outcome: BeginOutcome): RecordLease {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

const newIdentity = (label: string) => `shop:${label}:v1:tenant-1:${randomUUID()}`;
const [, postgres] = recordDatabases().find(([name]) => name === 'postgres')!;

/**
 * A database error in the middle of `begin` or `complete`: the server terminates the backend
 * (`pg_terminate_backend`) while the statement waits on a lock or the transaction is open. Afterwards
 * the key must be usable again at the latest once the lease has expired.
 */
describe('TypeOrmIdempotencyRecordStore on postgres, connection terminated mid-operation', () => {
  let admin: DataSource;
  let orders: OrdersTable;

  beforeAll(async () => {
    await postgres.setUp();
    admin = await postgres.connect(2);
    orders = new OrdersTable(admin);
    await orders.create();
  });

  afterAll(async () => {
    await orders.drop();
    await postgres.tearDown();
  });

  /** The pid of this run's backend that waits on a lock in a statement on the records table. */
  async function waitingBackend(): Promise<number> {
    for (;;) {
      const rows: { pid: number }[] = await admin.query(
        `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%"${admin.driver.schema ?? ''}"."oncely_idempotency_record"%`],
      );
      if (rows[0]) return rows[0].pid;
      await sleep(10);
    }
  }

  async function terminate(pid: number): Promise<void> {
    const [{ terminated }] = await admin.query('SELECT pg_terminate_backend($1) AS terminated', [
      pid,
    ]);
    expect(terminated).toBe(true);
  }

  /** An open transaction on its own connection, to hold locks the store then waits on. */
  async function holder(): Promise<QueryRunner> {
    const runner = admin.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return runner;
  }

  it('begin terminated while its INSERT waits: nothing is left and the next begin acquires at once', async () => {
    const store = new TypeOrmIdempotencyRecordStore(await postgres.connect(1), {
      clock: new FakeClock(),
    });
    const identity = newIdentity('begin-killed');
    const blocker = await holder();
    // Another node's begin, caught mid-INSERT: uncommitted, so the store's INSERT waits on it.
    await blocker.query(
      `INSERT INTO ${recordsTable(admin)} (key_hash, key, fingerprint, status, owner_token, fence, lease_expires_at, retention_ms, created_at, expires_at) VALUES ($1, $2, $3, 'in_progress', 'other', 1, 0, 0, 0, 0)`,
      [recordKeyHash(identity), identity, digest],
    );
    const begin = store.begin(identity, digest, timing);
    const pid = await waitingBackend();

    await terminate(pid);

    await expect(begin).rejects.toBeInstanceOf(RecordStoreUnavailableError);
    await blocker.rollbackTransaction();
    await blocker.release();
    acquired(await store.begin(identity, digest, timing));
  });

  it('a begin terminated mid-INSERT on another connection leaves nothing: the waiting begin acquires', async () => {
    const store = new TypeOrmIdempotencyRecordStore(await postgres.connect(1), {
      clock: new FakeClock(),
    });
    const identity = newIdentity('other-begin-killed');
    const blocker = await holder();
    const [{ pid }] = await blocker.query('SELECT pg_backend_pid() AS pid');
    await blocker.query(
      `INSERT INTO ${recordsTable(admin)} (key_hash, key, fingerprint, status, owner_token, fence, lease_expires_at, retention_ms, created_at, expires_at) VALUES ($1, $2, $3, 'in_progress', 'other', 1, 0, 0, 0, 0)`,
      [recordKeyHash(identity), identity, digest],
    );
    const begin = store.begin(identity, digest, timing);
    await waitingBackend();

    await terminate(pid);

    expect((await begin).kind).toBe('acquired');
    await blocker.release().catch(() => undefined);
  });

  it('complete terminated while its UPDATE waits: the record stays in progress until its lease expires, then is taken over', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(await postgres.connect(1), { clock });
    const identity = newIdentity('complete-killed');
    const lease = acquired(await store.begin(identity, digest, timing));
    const blocker = await holder();
    await blocker.query(`SELECT 1 FROM ${recordsTable(admin)} WHERE key_hash = $1 FOR UPDATE`, [
      lease.keyHash,
    ]);
    const complete = store.complete(lease, done);
    const pid = await waitingBackend();

    await terminate(pid);

    await expect(complete).rejects.toBeInstanceOf(RecordStoreUnavailableError);
    await blocker.commitTransaction();
    await blocker.release();
    expect(await store.begin(identity, digest, timing)).toMatchObject({ kind: 'in_progress' });
    clock.advance(timing.leaseTtlMs + 1);
    const next = acquired(await store.begin(identity, digest, timing));
    expect(next.fence).toBe(lease.fence + 1);
    await store.complete(next, done);
    expect(await store.begin(identity, digest, timing)).toEqual({ kind: 'replay', response: done });
  });

  it('a transaction terminated before its complete commits nothing: no business row, and the key is free after the lease', async () => {
    const clock = new FakeClock();
    const store = new TypeOrmIdempotencyRecordStore(await postgres.connect(1), { clock });
    const identity = newIdentity('transaction-killed');
    const orderRef = randomUUID();
    const lease = acquired(await store.begin(identity, digest, timing));
    const backend = deferred<number>();
    const proceed = deferred();

    const run = store.runInTransaction(lease, async (manager) => {
      await orders.insert(manager, orderRef, 'killed');
      const [{ pid }] = await manager.query('SELECT pg_backend_pid() AS pid');
      backend.resolve(pid);
      await proceed.promise;
      return { response: done, result: undefined };
    });
    await terminate(await backend.promise);
    proceed.resolve();

    // Either the complete hits the dead session, or TypeORM already released the runner when the
    // session ended; both are connection failures, not a lost lease.
    await expect(run).rejects.toBeInstanceOf(RecordStoreUnavailableError);
    await expect(run).rejects.not.toBeInstanceOf(LeaseLostError);
    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([]);
    expect(await store.begin(identity, digest, timing)).toMatchObject({ kind: 'in_progress' });
    clock.advance(timing.leaseTtlMs + 1);
    const next = acquired(await store.begin(identity, digest, timing));
    await store.runInTransaction(next, async (manager) => {
      await orders.insert(manager, orderRef, 'retry');
      return { response: done, result: undefined };
    });
    expect((await orders.rows()).filter((row) => row.startsWith(orderRef))).toEqual([
      `${orderRef}:retry`,
    ]);
  });
});
