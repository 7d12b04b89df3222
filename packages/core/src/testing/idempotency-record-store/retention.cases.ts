import assert from 'node:assert/strict';
import type { RecordCases, RecordCaseSettings } from './idempotency-record-store.harness.js';
import {
  acquired,
  assertReplays,
  assertSameResponse,
  digestOf,
  newIdentity,
} from './record-contract.helpers.js';
import { jsonResponse } from './stored-responses.js';

/** What a completed record answers, for how long, and what `purgeExpired` removes. */
export function retentionCases({ timing, expiresNatively, past }: RecordCaseSettings): RecordCases {
  const { leaseTtlMs, retentionMs } = timing;
  const [a, b] = [digestOf('a'), digestOf('b')];

  return {
    'begin replays the stored response after complete': async ({ store }) => {
      const identity = newIdentity('replay');
      const lease = acquired(await store.begin(identity, a, timing));
      await store.complete(lease, jsonResponse);

      await assertReplays(store, identity, timing, jsonResponse);
      await assertReplays(store, identity, timing, jsonResponse);
    },

    'begin reports mismatch for another digest and leaves the record untouched': async ({
      store,
    }) => {
      const identity = newIdentity('mismatch');
      const lease = acquired(await store.begin(identity, a, timing));

      assert.deepEqual(await store.begin(identity, b, timing), { kind: 'mismatch' });
      assert.equal((await store.begin(identity, a, timing)).kind, 'in_progress');
      await store.complete(lease, jsonResponse);

      assert.deepEqual(await store.begin(identity, b, timing), { kind: 'mismatch' });
      await assertReplays(store, identity, timing, jsonResponse);
    },

    'an expired completed record is treated as absent': async ({ store, advance }) => {
      const identity = newIdentity('retention');
      const lease = acquired(await store.begin(identity, a, timing));
      await store.complete(lease, jsonResponse);
      await advance(past(retentionMs));

      const next = acquired(await store.begin(identity, b, timing));
      assert.notEqual(next.ownerToken, lease.ownerToken);
      assert.equal((await store.begin(identity, b, timing)).kind, 'in_progress');
      assert.deepEqual(await store.begin(identity, a, timing), { kind: 'mismatch' });
    },

    'peekReplay, where implemented, answers only what begin would replay: none before completion, for another digest or owner, or after retention':
      async ({ store, advance }) => {
        if (store.peekReplay === undefined) return;
        const identity = newIdentity('peek');
        const owned = { ...timing, owner: 'service-a' };
        assert.equal(store.peekReplay(identity, a, owned), undefined, 'an unknown record');
        const lease = acquired(await store.begin(identity, a, owned));
        assert.equal(store.peekReplay(identity, a, owned), undefined, 'a record in flight');
        await store.complete(lease, jsonResponse);

        const held = store.peekReplay(identity, a, owned);
        if (held !== undefined) assertSameResponse(held, jsonResponse);
        assert.equal(store.peekReplay(identity, b, owned), undefined, 'another digest');
        const foreign = { ...timing, owner: 'service-b' };
        assert.equal(store.peekReplay(identity, a, foreign), undefined, 'another owner');
        assert.equal((await store.begin(identity, a, foreign)).kind, 'foreign_owner');
        await advance(past(retentionMs));
        assert.equal(store.peekReplay(identity, a, owned), undefined, 'an expired record');
      },

    'purgeExpired removes only expired records, in batches': async ({ store, advance }) => {
      const short = timing;
      const long = { leaseTtlMs: leaseTtlMs * 100, retentionMs: retentionMs * 100 };
      const expiring = Array.from({ length: 3 }, () => newIdentity('purge-expired'));
      for (const identity of expiring) {
        await store.complete(acquired(await store.begin(identity, a, short)), jsonResponse);
      }
      const abandoned = newIdentity('purge-abandoned');
      acquired(await store.begin(abandoned, a, short));
      const keptCompleted = newIdentity('purge-kept');
      await store.complete(acquired(await store.begin(keptCompleted, a, long)), jsonResponse);
      const keptInProgress = newIdentity('purge-working');
      acquired(await store.begin(keptInProgress, a, long));
      await advance(past(Math.max(leaseTtlMs, retentionMs)));

      const purged = [
        await store.purgeExpired(3),
        await store.purgeExpired(3),
        await store.purgeExpired(3),
      ];

      assert.deepEqual(purged, expiresNatively ? [0, 0, 0] : [3, 1, 0]);
      for (const identity of [...expiring, abandoned]) {
        acquired(await store.begin(identity, b, short));
      }
      await assertReplays(store, keptCompleted, long, jsonResponse);
      assert.equal((await store.begin(keptInProgress, a, long)).kind, 'in_progress');
    },
  };
}
