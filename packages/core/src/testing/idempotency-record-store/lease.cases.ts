import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type {
  IdempotencyRecordStoreHarness,
  RecordCases,
  RecordCaseSettings,
} from './idempotency-record-store.harness.js';
import {
  acquired,
  assertLeaseLost,
  assertReplays,
  countKinds,
  digestOf,
  leaseOf,
  newIdentity,
} from './record-contract.helpers.js';
import { jsonResponse, textResponse } from './stored-responses.js';

/** Who holds a record: `begin`, takeover after expiry, `renew`, `release`, a single `complete`. */
export function leaseCases({ timing, concurrency, past }: RecordCaseSettings): RecordCases {
  const { leaseTtlMs } = timing;
  const a = digestOf('a');

  /** A fresh identity whose first lease has just run out, nobody having taken it over yet. */
  const expiredLease = async ({ store, advance }: IdempotencyRecordStoreHarness, label: string) => {
    const identity = newIdentity(label);
    const first = acquired(await store.begin(identity, a, timing));
    await advance(past(leaseTtlMs));
    return { identity, first };
  };

  return {
    'begin acquires a fresh identity with a lease on it': async ({ store }) => {
      const identity = newIdentity('fresh');
      const lease = acquired(await store.begin(identity, a, timing));

      assert.equal(lease.identity, identity);
      assert.equal(lease.keyHash, createHash('sha256').update(identity, 'utf8').digest('hex'));
      assert.equal(typeof lease.ownerToken, 'string');
      assert.ok(lease.ownerToken.length > 0, 'the owner token is empty');
      assert.ok(
        Number.isSafeInteger(lease.fence) && lease.fence > 0,
        'fence is not a positive integer',
      );
      assert.ok(lease.leaseExpiresAt instanceof Date, 'leaseExpiresAt is not a Date');
    },

    'begin reports in_progress with a retry-after while the lease is live': async ({ store }) => {
      const identity = newIdentity('live');
      acquired(await store.begin(identity, a, timing));

      const outcome = await store.begin(identity, a, timing);

      assert.equal(outcome.kind, 'in_progress');
      const { retryAfterMs } = outcome;
      assert.ok(retryAfterMs > 0 && retryAfterMs <= leaseTtlMs, `retryAfterMs ${retryAfterMs}`);
    },

    'exactly one of concurrent begins acquires, the others are in_progress': async ({ store }) => {
      const identity = newIdentity('race');
      const outcomes = await Promise.all(
        Array.from({ length: concurrency }, () => store.begin(identity, a, timing)),
      );

      assert.deepEqual(countKinds(outcomes), { acquired: 1, in_progress: concurrency - 1 });
    },

    'an expired lease is taken over exactly once, with a higher fence': async (harness) => {
      const { store } = harness;
      const { identity, first } = await expiredLease(harness, 'takeover');

      const outcomes = await Promise.all(
        Array.from({ length: concurrency }, () => store.begin(identity, a, timing)),
      );

      assert.deepEqual(countKinds(outcomes), { acquired: 1, in_progress: concurrency - 1 });
      const second = outcomes.map(leaseOf).find((lease) => lease !== undefined);
      assert.ok(second !== undefined);
      assert.ok(second.fence > first.fence, `fence ${second.fence} is not above ${first.fence}`);
      assert.notEqual(second.ownerToken, first.ownerToken);
    },

    'the previous owner can neither complete, release nor renew after a takeover': async (
      harness,
    ) => {
      const { store } = harness;
      const { identity, first } = await expiredLease(harness, 'stale-owner');
      const second = acquired(await store.begin(identity, a, timing));

      await assertLeaseLost(store.complete(first, textResponse), first);
      await store.release(first);
      assert.equal(await store.renew(first, leaseTtlMs * 10), false);
      assert.equal((await store.begin(identity, a, timing)).kind, 'in_progress');

      await store.complete(second, jsonResponse);
      await assertReplays(store, identity, timing, jsonResponse);
    },

    'renew extends a held lease': async ({ store, advance }) => {
      const identity = newIdentity('renew');
      const lease = acquired(await store.begin(identity, a, timing));
      await advance(Math.round(leaseTtlMs / 2));

      assert.equal(await store.renew(lease, leaseTtlMs * 3), true);
      await advance(leaseTtlMs);
      assert.equal((await store.begin(identity, a, timing)).kind, 'in_progress');

      await advance(past(leaseTtlMs * 2));
      const next = acquired(await store.begin(identity, a, timing));
      assert.ok(next.fence > lease.fence, 'the renewed lease was not taken over after it expired');
    },

    'release lets the next begin acquire, and the released lease is lost': async ({ store }) => {
      const identity = newIdentity('release');
      const first = acquired(await store.begin(identity, a, timing));
      await store.release(first);

      const second = acquired(await store.begin(identity, a, timing));
      assert.notEqual(second.ownerToken, first.ownerToken);
      await assertLeaseLost(store.complete(first, textResponse), first);
      assert.equal(await store.renew(first, leaseTtlMs), false);
      await store.release(first);
      assert.equal((await store.begin(identity, a, timing)).kind, 'in_progress');
    },

    'complete is accepted once: a second complete fails and keeps the first response': async ({
      store,
    }) => {
      const identity = newIdentity('complete-twice');
      const lease = acquired(await store.begin(identity, a, timing));
      await store.complete(lease, jsonResponse);

      await assertLeaseLost(store.complete(lease, textResponse), lease);
      await assertReplays(store, identity, timing, jsonResponse);
    },
  };
}
