import { jest } from '@jest/globals';
import type { RecordLease, StoredResponse } from '@oncely/core';
import type { Clock } from '@oncely/core/adapter';
import {
  InMemoryCapacityError,
  InMemoryIdempotencyRecordStore,
  InvalidRecordOptionError,
  UnstorableResponseError,
} from '@oncely/core';
import { idempotencyRecordStoreContract } from '@oncely/core/testing';

class FakeClock implements Clock {
  constructor(private current = 1_750_000_000_000) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

const timing = { leaseTtlMs: 1_000, retentionMs: 10_000 };

function acquired(outcome: Awaited<ReturnType<InMemoryIdempotencyRecordStore['begin']>>) {
  if (outcome.kind !== 'acquired') throw new Error(`expected acquired, got ${outcome.kind}`);
  return outcome.lease;
}

describe('InMemoryIdempotencyRecordStore', () => {
  describe('contract', () => {
    const cases = idempotencyRecordStoreContract(async () => {
      const clock = new FakeClock();
      return {
        store: new InMemoryIdempotencyRecordStore({ clock }),
        advance: async (ms) => clock.advance(ms),
        cleanup: async () => undefined,
      };
    });
    it.each(cases.map((contractCase) => [contractCase.name, contractCase]))('%s', (_, c) =>
      c.run(),
    );
  });

  it('sweeps expired records out of memory on a begin once the sweep interval passed', async () => {
    const clock = new FakeClock();
    const store = new InMemoryIdempotencyRecordStore({ clock, sweepIntervalMs: 5_000 });
    for (let index = 0; index < 5; index += 1) {
      acquired(await store.begin(`sweep:${index}`, 'd', timing));
    }
    clock.advance(2_000);
    acquired(await store.begin('sweep:early', 'd', timing));
    expect(store.size).toBe(6);

    clock.advance(3_000);
    acquired(await store.begin('sweep:late', 'd', timing));

    expect(store.size).toBe(1);
  });

  it('decodes a completed record once for every peek, while begin still hands out copies', async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const lease = acquired(await store.begin('peek:1', 'd', timing));
      await store.complete(lease, {
        status: 201,
        headers: { 'x-order': '7' },
        body: { kind: 'json', value: { id: 7 } },
      });
      parse.mockClear();

      const first = store.peekReplay('peek:1', 'd', timing);
      const parsedOnFirstPeek = parse.mock.calls.length;
      const second = store.peekReplay('peek:1', 'd', timing);

      expect(first).toEqual({
        status: 201,
        headers: { 'x-order': '7' },
        body: { kind: 'json', value: { id: 7 } },
      });
      expect(parsedOnFirstPeek).toBe(2);
      expect(second).toBe(first);
      expect(parse).toHaveBeenCalledTimes(2);
      const begun = await store.begin('peek:1', 'd', timing);
      expect(begun.kind === 'replay' && begun.response).not.toBe(first);
      expect(begun.kind === 'replay' && begun.response).toEqual(first);
    } finally {
      parse.mockRestore();
    }
  });

  it('keeps its own copy of a bytes body: later changes by the caller are not replayed', async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const body = new Uint8Array([1, 2, 3]);
    const lease = acquired(await store.begin('copy:1', 'd', timing));
    await store.complete(lease, { status: 200, headers: {}, body: { kind: 'bytes', value: body } });
    body[0] = 9;

    const first = await store.begin('copy:1', 'd', timing);
    if (first.kind !== 'replay' || first.response.body.kind !== 'bytes')
      throw new Error(first.kind);
    first.response.body.value[1] = 9;
    const second = await store.begin('copy:1', 'd', timing);

    expect(second).toEqual({
      kind: 'replay',
      response: {
        status: 200,
        headers: {},
        body: { kind: 'bytes', value: new Uint8Array([1, 2, 3]) },
      },
    });
  });

  it('replays a JSON body as its JSON form, as a durable store would', async () => {
    const store = new InMemoryIdempotencyRecordStore();
    const lease = acquired(await store.begin('json:1', 'd', timing));
    await store.complete(lease, {
      status: 200,
      headers: {},
      body: { kind: 'json', value: { at: new Date(0), skipped: undefined, n: 1 } },
    });

    const outcome = await store.begin('json:1', 'd', timing);

    expect(outcome).toEqual({
      kind: 'replay',
      response: {
        status: 200,
        headers: {},
        body: { kind: 'json', value: { at: '1970-01-01T00:00:00.000Z', n: 1 } },
      },
    });
  });

  it.each<[string, StoredResponse]>([
    [
      'an undefined JSON body',
      { status: 200, headers: {}, body: { kind: 'json', value: undefined } },
    ],
    ['a BigInt in a JSON body', { status: 200, headers: {}, body: { kind: 'json', value: 1n } }],
    ['a status outside 100-999', { status: 42, headers: {}, body: { kind: 'empty' } }],
  ])('refuses %s with UnstorableResponseError and keeps the lease', async (_, response) => {
    const store = new InMemoryIdempotencyRecordStore();
    const lease: RecordLease = acquired(await store.begin('bad:1', 'd', timing));

    await expect(store.complete(lease, response)).rejects.toBeInstanceOf(UnstorableResponseError);

    expect(await store.begin('bad:1', 'd', timing)).toMatchObject({ kind: 'in_progress' });
    await store.complete(lease, { status: 204, headers: {}, body: { kind: 'empty' } });
  });

  describe('maxRecords', () => {
    const ok: StoredResponse = { status: 204, headers: {}, body: { kind: 'empty' } };

    it('refuses a new key at the bound with InMemoryCapacityError, and answers existing ones', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxRecords: 2 });
      const done = acquired(await store.begin('done', 'd', timing));
      await store.complete(done, ok);
      acquired(await store.begin('running', 'd', timing));
      clock.advance(400);

      const refusal = await store.begin('new', 'd', timing).catch((error) => error);

      expect(refusal).toBeInstanceOf(InMemoryCapacityError);
      expect(refusal).toMatchObject({
        adapter: 'InMemoryIdempotencyRecordStore',
        option: 'maxRecords',
        limit: 2,
        retryAfterMs: 600,
      });
      expect(refusal.message).toMatch(/Raise maxRecords/);
      expect(await store.begin('done', 'd', timing)).toEqual({ kind: 'replay', response: ok });
      expect(await store.begin('done', 'other', timing)).toEqual({ kind: 'mismatch' });
      expect(await store.begin('running', 'd', timing)).toEqual({
        kind: 'in_progress',
        retryAfterMs: 600,
      });
      expect(store.size).toBe(2);
    });

    it('sweeps expired records before refusing, and takes a new key in their place', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxRecords: 2 });
      acquired(await store.begin('abandoned', 'd', timing));
      acquired(await store.begin('running', 'd', { ...timing, leaseTtlMs: 5_000 }));
      await expect(store.begin('new', 'd', timing)).rejects.toBeInstanceOf(InMemoryCapacityError);

      clock.advance(1_000);

      acquired(await store.begin('new', 'd', timing));
      expect(store.size).toBe(2);
      expect(await store.begin('running', 'd', timing)).toMatchObject({ kind: 'in_progress' });
      await expect(store.begin('newer', 'd', timing)).rejects.toBeInstanceOf(InMemoryCapacityError);
    });

    it('takes over an expired key at the bound, and makes room when a lease is released', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxRecords: 1 });
      const first = acquired(await store.begin('key', 'd', timing));
      clock.advance(1_000);
      const second = acquired(await store.begin('key', 'd', timing));
      expect(second.fence).toBe(first.fence + 1);

      await store.release(second);

      acquired(await store.begin('other', 'd', timing));
    });

    it('notices a record that expires sooner than it was first due, when it is full', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxRecords: 1 });
      const lease = acquired(
        await store.begin('key', 'd', { leaseTtlMs: 60_000, retentionMs: 10 }),
      );
      await store.complete(lease, ok);
      clock.advance(10);

      acquired(await store.begin('other', 'd', timing));
    });

    it('holds 100 000 records by default and refuses a bound that is not a positive integer', async () => {
      expect(() => new InMemoryIdempotencyRecordStore({ maxRecords: 0 })).toThrow(
        InvalidRecordOptionError,
      );
      const store = new InMemoryIdempotencyRecordStore({ clock: new FakeClock() });
      await Promise.all(
        Array.from({ length: 100_000 }, (_, index) => store.begin(`k${index}`, 'd', timing)),
      );
      await expect(store.begin('one-more', 'd', timing)).rejects.toBeInstanceOf(
        InMemoryCapacityError,
      );
    });
  });

  describe('maxBytes', () => {
    const MiB = 1024 * 1024;
    const large: StoredResponse = {
      status: 200,
      headers: {},
      body: { kind: 'bytes', value: new Uint8Array(MiB).fill(7) },
    };
    /** What one record of `large` is counted: 256, two per character of its texts, its body. */
    const recordBytes = (identity: string, lease: RecordLease) =>
      256 + 2 * (identity.length + 'd'.length + lease.ownerToken.length + '{}'.length) + MiB;

    it('takes new keys until the bytes held reach maxBytes, then refuses them and keeps every live record', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxBytes: 8 * MiB });
      let counted = 0;
      for (let index = 0; index < 8; index++) {
        const lease = acquired(await store.begin(`k${index}`, 'd', timing));
        await store.complete(lease, large);
        counted += recordBytes(`k${index}`, lease);
        expect(store.bytes).toBe(counted);
      }
      // Eight 1 MiB responses: the eighth was taken below the bound, and its response kept.
      expect(store.size).toBe(8);
      expect(store.bytes).toBeGreaterThan(8 * MiB);

      const refusal = await store.begin('k8', 'd', timing).catch((error) => error);
      expect(refusal).toBeInstanceOf(InMemoryCapacityError);
      expect(refusal).toMatchObject({
        adapter: 'InMemoryIdempotencyRecordStore',
        option: 'maxBytes',
        limit: 8 * MiB,
        unit: 'bytes',
        // No record expires before the first lease would have: a lower bound.
        retryAfterMs: 1_000,
      });
      expect(refusal.message).toMatch(
        /^InMemoryIdempotencyRecordStore holds 8388608 bytes of live entries \(its maxBytes\) and may drop none of them.*Raise maxBytes/,
      );
      for (let index = 0; index < 8; index++) {
        expect(await store.begin(`k${index}`, 'd', timing)).toEqual({
          kind: 'replay',
          response: large,
        });
      }
      expect(store.size).toBe(8);
      expect(store.bytes).toBe(counted);

      clock.advance(10_000);
      acquired(await store.begin('k8', 'd', timing));
      expect(store.size).toBe(1);
      expect(store.bytes).toBe(256 + 2 * ('k8'.length + 1 + 36));
    });

    it('gives back the bytes of records released, deleted, purged and taken over', async () => {
      const clock = new FakeClock();
      const store = new InMemoryIdempotencyRecordStore({ clock, maxBytes: 8 * MiB });
      const released = acquired(await store.begin('released', 'd', timing));
      await store.release(released);
      await store.complete(acquired(await store.begin('deleted', 'd', timing)), large);
      expect(await store.deleteRecord('deleted')).toBe(true);
      const stuck = acquired(await store.begin('stuck', 'd', timing));
      await store.forceRelease('stuck');
      expect(store.bytes).toBe(
        256 + 2 * ('stuck'.length + 1) + 2 * `released:${stuck.ownerToken}`.length,
      );
      expect(await store.purgeExpired(10)).toBe(1);
      expect(store.size).toBe(0);
      expect(store.bytes).toBe(0);
    });

    it('holds 256 MiB by default and refuses a bound that is not a positive integer', async () => {
      for (const maxBytes of [0, 1.5, -1]) {
        expect(() => new InMemoryIdempotencyRecordStore({ maxBytes })).toThrow(
          InvalidRecordOptionError,
        );
        expect(() => new InMemoryIdempotencyRecordStore({ maxBytes })).toThrow(/maxBytes/);
      }
      const store = new InMemoryIdempotencyRecordStore({ clock: new FakeClock() });
      for (let index = 0; index < 256; index++) {
        await store.complete(acquired(await store.begin(`k${index}`, 'd', timing)), large);
      }
      await expect(store.begin('one-more', 'd', timing)).rejects.toMatchObject({
        option: 'maxBytes',
        limit: 256 * MiB,
      });
      expect(store.size).toBe(256);
    });
  });
});
