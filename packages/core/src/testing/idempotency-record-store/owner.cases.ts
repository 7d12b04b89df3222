import assert from 'node:assert/strict';
import type { BeginOptions } from '../../record/idempotency-record-store.port.js';
import type { RecordCases, RecordCaseSettings } from './idempotency-record-store.harness.js';
import {
  acquired,
  assertSameResponse,
  countKinds,
  digestOf,
  newIdentity,
  replayed,
} from './record-contract.helpers.js';
import { jsonResponse, textResponse } from './stored-responses.js';

/**
 * `begin` with an `owner`: a live record of another owner answers `foreign_owner` naming it and
 * is neither replayed nor overwritten; a record without owner counts as the caller's own; a
 * `shared` begin accepts every owner, and `ownerAliases` the owners they name; an expired record of
 * another owner is absent.
 */
export function ownerCases({ timing, concurrency, past }: RecordCaseSettings): RecordCases {
  const { leaseTtlMs } = timing;
  const [a, b] = [digestOf('a'), digestOf('b')];
  const as = (owner: string, extra: Partial<BeginOptions> = {}): BeginOptions => ({
    ...timing,
    owner,
    ...extra,
  });
  const [orders, billing] = ['orders-api', '@acme/billing-api'];

  return {
    "a record of another owner answers foreign_owner, in flight and completed, and stays its owner's":
      async ({ store }) => {
        const identity = newIdentity('foreign');
        const holder = acquired(await store.begin(identity, a, as(orders)));

        assert.deepEqual(await store.begin(identity, a, as(billing)), {
          kind: 'foreign_owner',
          owner: orders,
        });
        await store.complete(holder, jsonResponse);
        assert.deepEqual(await store.begin(identity, a, as(billing)), {
          kind: 'foreign_owner',
          owner: orders,
        });
        // Refused before the digest is compared: another service's payload says nothing.
        assert.deepEqual(await store.begin(identity, b, as(billing)), {
          kind: 'foreign_owner',
          owner: orders,
        });
        assertSameResponse(replayed(await store.begin(identity, a, as(orders))), jsonResponse);
      },

    'a record written without owner counts as every caller’s own': async ({ store }) => {
      const identity = newIdentity('unowned');
      const holder = acquired(await store.begin(identity, a, timing));

      assert.equal((await store.begin(identity, a, as(billing))).kind, 'in_progress');
      await store.complete(holder, textResponse);

      assertSameResponse(replayed(await store.begin(identity, a, as(orders))), textResponse);
      assertSameResponse(replayed(await store.begin(identity, a, as(billing))), textResponse);
      assert.deepEqual(await store.begin(identity, b, as(billing)), { kind: 'mismatch' });
    },

    'a shared begin accepts a record of another owner; the record keeps its owner': async ({
      store,
    }) => {
      const identity = newIdentity('shared');
      await store.complete(acquired(await store.begin(identity, a, as(orders))), jsonResponse);

      const shared = as(billing, { shared: true });
      assertSameResponse(replayed(await store.begin(identity, a, shared)), jsonResponse);
      assert.deepEqual(await store.begin(identity, b, shared), { kind: 'mismatch' });
      assert.deepEqual(await store.begin(identity, a, as(billing)), {
        kind: 'foreign_owner',
        owner: orders,
      });
    },

    'an expired in-flight record of another owner is absent, and the new holder owns it': async ({
      store,
      advance,
    }) => {
      const identity = newIdentity('foreign-expired');
      acquired(await store.begin(identity, a, as(orders)));
      await advance(past(leaseTtlMs));

      const lease = acquired(await store.begin(identity, a, as(billing)));
      await store.complete(lease, textResponse);

      assert.deepEqual(await store.begin(identity, a, as(orders)), {
        kind: 'foreign_owner',
        owner: billing,
      });
      assertSameResponse(replayed(await store.begin(identity, a, as(billing))), textResponse);
    },

    'a previous identity’s record of another owner answers foreign_owner naming it': async ({
      store,
    }) => {
      const previous = newIdentity('foreign-previous-v1');
      const current = newIdentity('foreign-previous-v2');
      await store.complete(acquired(await store.begin(previous, a, as(orders))), jsonResponse);

      const outcome = await store.begin(
        current,
        a,
        as(billing, { previousIdentities: [previous] }),
      );

      assert.deepEqual(outcome, {
        kind: 'foreign_owner',
        owner: orders,
        previousIdentity: previous,
      });
      // Nothing was claimed under the current identity.
      acquired(await store.begin(current, a, as(billing)));
    },

    'a begin whose ownerAliases name the record’s owner takes it as its own, both ways; the record keeps its owner':
      async ({ store }) => {
        const renamed = 'orders-v2';
        const asRenamed = as(renamed, { ownerAliases: new Set([orders]) });
        const asOldAccepting = as(orders, { ownerAliases: new Set([renamed]) });
        const byOld = newIdentity('alias-old');
        await store.complete(acquired(await store.begin(byOld, a, as(orders))), jsonResponse);

        assertSameResponse(replayed(await store.begin(byOld, a, asRenamed)), jsonResponse);
        // Its own record: the digest is compared, not the owner.
        assert.deepEqual(await store.begin(byOld, b, asRenamed), { kind: 'mismatch' });
        assert.deepEqual(await store.begin(byOld, a, as(billing)), {
          kind: 'foreign_owner',
          owner: orders,
        });

        const byNew = newIdentity('alias-new');
        const holder = acquired(await store.begin(byNew, a, asRenamed));
        assert.equal((await store.begin(byNew, a, asOldAccepting)).kind, 'in_progress');
        await store.complete(holder, textResponse);
        assertSameResponse(replayed(await store.begin(byNew, a, asOldAccepting)), textResponse);
        // An app that does not list the new name still refuses its record.
        assert.deepEqual(await store.begin(byNew, a, as(orders)), {
          kind: 'foreign_owner',
          owner: renamed,
        });

        const next = newIdentity('alias-next-version');
        const previous = await store.begin(next, a, { ...asRenamed, previousIdentities: [byOld] });
        assert.equal(previous.kind === 'replay' && previous.previousIdentity, byOld);
        assertSameResponse(replayed(previous), jsonResponse);
      },

    'of concurrent begins by two owners, one acquires and every other one is told whose it is':
      async ({ store }) => {
        const identity = newIdentity('foreign-race');
        const outcomes = await Promise.all(
          Array.from({ length: concurrency }, (_, i) =>
            store.begin(identity, a, as(i % 2 === 0 ? orders : billing)),
          ),
        );

        const winner = outcomes.findIndex((outcome) => outcome.kind === 'acquired');
        assert.ok(winner >= 0, JSON.stringify(countKinds(outcomes)));
        const owner = winner % 2 === 0 ? orders : billing;
        const sameSide = outcomes.filter((_, i) => (i % 2 === 0) === (winner % 2 === 0)).length;
        assert.deepEqual(countKinds(outcomes), {
          acquired: 1,
          ...(sameSide > 1 && { in_progress: sameSide - 1 }),
          foreign_owner: concurrency - sameSide,
        });
        for (const [i, outcome] of outcomes.entries()) {
          if ((i % 2 === 0) !== (winner % 2 === 0))
            assert.deepEqual(outcome, { kind: 'foreign_owner', owner });
        }
      },
  };
}
