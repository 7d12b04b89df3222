import assert from 'node:assert/strict';
import type { FlightOutcome } from '../../flight/flight-coordinator.port.js';
import type { FlightCases, FlightCoordinatorFixture } from './flight-coordinator.fixture.js';
import {
  LONG_LEASE,
  SHORT_TTL,
  EXPIRED,
  newKey,
  fenceOf,
  result,
  error,
} from './flight-contract.helpers.js';

/** What a completion leaves behind: the stored result or error, exactly, for its TTL. */
export const outcomeCases: FlightCases = {
  'complete stores the result and frees the lease: acquire is cached': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    const payload = '{"text":"ü € 😀 \\n \\"quoted\\""}';
    assert.equal(await f.coordinator.complete(key, 'owner-a', result(payload, LONG_LEASE)), true);
    for (const owner of ['owner-b', 'owner-c']) {
      assert.deepEqual(await f.coordinator.acquire(key, owner, LONG_LEASE), {
        kind: 'cached',
        payload,
      });
    }
  },

  'complete with an error outcome stores it: acquire is failed': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    const payload = '{"name":"BadRequest","status":400}';
    assert.equal(await f.coordinator.complete(key, 'owner-a', error(payload, LONG_LEASE)), true);
    assert.deepEqual(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE), {
      kind: 'failed',
      payload,
    });
  },

  'payloads come back exactly, large ones included': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    const payload = JSON.stringify({ blob: 'x\u0000y\u2028z'.repeat(20_000) });
    assert.equal(await f.coordinator.complete(key, 'owner-a', result(payload, LONG_LEASE)), true);
    const outcome = await f.coordinator.acquire(key, 'owner-b', LONG_LEASE);
    assert.equal(outcome.kind, 'cached');
    assert.ok(
      (outcome as { payload: string }).payload === payload,
      'the payload changed on its way',
    );
  },

  'an outcome with ttl 0 stores nothing and frees the lease': async (f) => {
    const key = newKey();
    for (const outcome of [result('"r"', 0), error('"e"', 0)]) {
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.complete(key, 'owner-a', outcome), true);
    }
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
  },

  'a stored result expires after its TTL': expiresAfterTtl(result('"r"', SHORT_TTL), 'cached'),

  'peek, where implemented, answers no outcome acquire would not return: none before, under a lease, with ttl 0 or after expiry':
    async (f) => {
      const { coordinator } = f;
      if (coordinator.peek === undefined) return;
      for (const outcome of [result('"r"', SHORT_TTL), error('"e"', SHORT_TTL), result('"z"', 0)]) {
        const key = newKey();
        assert.equal(coordinator.peek(key), undefined, 'an unknown key is held');
        fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
        assert.equal(coordinator.peek(key), undefined, 'a lease is held as an outcome');
        assert.equal(await coordinator.complete(key, 'owner-a', outcome), true);
        const held = coordinator.peek(key);
        if (held !== undefined) {
          assert.deepEqual(held, await coordinator.acquire(key, 'owner-b', LONG_LEASE));
        }
        if (outcome.ttlMs === 0) assert.equal(held, undefined, 'an outcome kept for 0 ms is held');
        await f.advance(EXPIRED);
        assert.equal(coordinator.peek(key), undefined, 'an expired outcome is held');
      }
    },

  'a stored error expires after its TTL': expiresAfterTtl(error('"e"', SHORT_TTL), 'failed'),
};

/** A case: `outcome` is found (`found`) until its TTL runs out, then a new leader gets in. */
function expiresAfterTtl(outcome: FlightOutcome, found: 'cached' | 'failed') {
  return async (f: FlightCoordinatorFixture) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    assert.equal(await f.coordinator.complete(key, 'owner-a', outcome), true);
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, found);
    await f.advance(EXPIRED);
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
  };
}
