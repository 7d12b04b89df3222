import assert from 'node:assert/strict';
import type { BeginOptions } from '../../record/idempotency-record-store.port.js';
import type { RecordCases, RecordCaseSettings } from './idempotency-record-store.harness.js';
import {
  acquired,
  assertLeaseLost,
  assertSameResponse,
  countKinds,
  digestOf,
  newIdentity,
  replayed,
} from './record-contract.helpers.js';
import { jsonResponse, textResponse } from './stored-responses.js';

/**
 * `begin` with `previousIdentities`: a miss is answered by a live record of a previous version
 * (replay, in flight, mismatch) without claiming anything, an abandoned one is fenced off, and
 * two begins each listing the other's identity never both acquire.
 */
export function previousVersionCases({
  timing,
  concurrency,
  past,
}: RecordCaseSettings): RecordCases {
  const { leaseTtlMs, retentionMs } = timing;
  const [a, b] = [digestOf('a'), digestOf('b')];
  const after = (...previousIdentities: string[]): BeginOptions => ({
    ...timing,
    previousIdentities,
  });
  /** An identity and the same request's identity under the version before. */
  const versions = (label: string) => ({
    previous: newIdentity(`${label}-v1`),
    current: newIdentity(`${label}-v2`),
  });

  return {
    'a miss replays the completed record of a previous identity, naming it, and claims nothing':
      async ({ store }) => {
        const { previous, current } = versions('previous-replay');
        await store.complete(acquired(await store.begin(previous, a, timing)), jsonResponse);

        const outcome = await store.begin(current, a, after(previous));

        assertSameResponse(replayed(outcome), jsonResponse);
        assert.equal(outcome.kind === 'replay' && outcome.previousIdentity, previous);
        assertSameResponse(replayed(await store.begin(current, a, after(previous))), jsonResponse);
        // Nothing was left behind under the current identity: a begin without the list acquires.
        acquired(await store.begin(current, a, timing));
      },

    'a miss answers in_progress while the previous record is in flight, then replays it': async ({
      store,
    }) => {
      const { previous, current } = versions('previous-in-flight');
      const holder = acquired(await store.begin(previous, a, timing));

      const outcome = await store.begin(current, a, after(previous));

      assert.equal(outcome.kind, 'in_progress');
      const { retryAfterMs } = outcome;
      assert.ok(retryAfterMs > 0 && retryAfterMs <= leaseTtlMs, `retryAfterMs ${retryAfterMs}`);
      await store.complete(holder, textResponse);
      assertSameResponse(replayed(await store.begin(current, a, after(previous))), textResponse);
      acquired(await store.begin(current, a, timing));
    },

    'a miss answers mismatch for a previous record with another digest': async ({ store }) => {
      const { previous, current } = versions('previous-mismatch');
      const holder = acquired(await store.begin(previous, a, timing));

      assert.deepEqual(await store.begin(current, b, after(previous)), { kind: 'mismatch' });
      await store.complete(holder, jsonResponse);
      assert.deepEqual(await store.begin(current, b, after(previous)), { kind: 'mismatch' });
      acquired(await store.begin(current, b, timing));
    },

    'a previous record whose lease expired is fenced off, and the miss acquires': async ({
      store,
      advance,
    }) => {
      const { previous, current } = versions('previous-abandoned');
      const abandoned = acquired(await store.begin(previous, a, timing));
      await advance(past(leaseTtlMs));

      const lease = acquired(await store.begin(current, a, after(previous)));

      await assertLeaseLost(store.complete(abandoned, textResponse), abandoned);
      assert.equal(await store.renew(abandoned, leaseTtlMs), false);
      await store.complete(lease, jsonResponse);
      assertSameResponse(replayed(await store.begin(current, a, after(previous))), jsonResponse);
    },

    'an expired completed record of a previous identity is absent': async ({ store, advance }) => {
      const { previous, current } = versions('previous-expired');
      await store.complete(acquired(await store.begin(previous, a, timing)), jsonResponse);
      await advance(past(retentionMs));

      acquired(await store.begin(current, b, after(previous)));
    },

    "the identity's own record answers before any previous one": async ({ store }) => {
      const { previous, current } = versions('previous-shadowed');
      await store.complete(acquired(await store.begin(previous, a, timing)), textResponse);
      await store.complete(acquired(await store.begin(current, a, timing)), jsonResponse);

      const outcome = await store.begin(current, a, after(previous));

      assertSameResponse(replayed(outcome), jsonResponse);
      assert.equal(outcome.kind === 'replay' && outcome.previousIdentity, undefined);
    },

    'previous identities answer in the order listed': async ({ store }) => {
      const { current } = versions('previous-order');
      const [v1, v0] = [newIdentity('previous-order-v1'), newIdentity('previous-order-v0')];
      await store.complete(acquired(await store.begin(v1, a, timing)), jsonResponse);
      await store.complete(acquired(await store.begin(v0, a, timing)), textResponse);

      const newestFirst = await store.begin(current, a, after(v1, v0));
      const oldestFirst = await store.begin(current, a, after(v0, v1));

      assertSameResponse(replayed(newestFirst), jsonResponse);
      assert.equal(newestFirst.kind === 'replay' && newestFirst.previousIdentity, v1);
      assertSameResponse(replayed(oldestFirst), textResponse);
      assert.equal(oldestFirst.kind === 'replay' && oldestFirst.previousIdentity, v0);
    },

    'of concurrent begins on two identities each listing the other, at most one acquires': async ({
      store,
    }) => {
      const { previous, current } = versions('previous-race');
      const half = Math.max(1, Math.floor(concurrency / 2));
      const outcomes = await Promise.all(
        Array.from({ length: half * 2 }, (_, i) =>
          i % 2 === 0
            ? store.begin(current, a, after(previous))
            : store.begin(previous, a, after(current)),
        ),
      );

      const { acquired: winners = 0, in_progress: refused = 0 } = countKinds(outcomes);
      assert.ok(winners <= 1, `${winners} begins acquired`);
      assert.equal(winners + refused, half * 2, JSON.stringify(countKinds(outcomes)));
      // Both racers may have stood back (a store that claims first, then checks); then the next
      // begin acquires. Either way exactly one holder results.
      const next = await store.begin(current, a, after(previous));
      assert.equal(next.kind, winners === 1 ? 'in_progress' : 'acquired');
    },
  };
}
