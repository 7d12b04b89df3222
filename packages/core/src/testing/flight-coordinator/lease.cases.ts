import assert from 'node:assert/strict';
import type { AcquireOutcome, FlightCoordinator } from '../../flight/flight-coordinator.port.js';
import type { FlightCases } from './flight-coordinator.fixture.js';
import {
  assertIncreasing,
  CONCURRENT_CALLERS,
  error,
  EXPIRED,
  fenceOf,
  LONG_LEASE,
  newKey,
  result,
  SHORT_TTL,
} from './flight-contract.helpers.js';

/** Who leads: acquiring, fencing, renewing and giving up a lease, alone and under contention. */
export const leaseCases: FlightCases = {
  'acquire on a free key leads with a positive integer fence': async ({ coordinator }) => {
    const fence = fenceOf(await coordinator.acquire(newKey(), 'owner-a', LONG_LEASE));
    assert.ok(Number.isSafeInteger(fence) && fence > 0, `fence ${fence} is not a positive integer`);
  },

  'acquire while the lease is held is busy with the lease remaining time': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    for (const owner of ['owner-b', 'owner-a']) {
      const outcome = await f.coordinator.acquire(key, owner, LONG_LEASE);
      assert.equal(outcome.kind, 'busy', `acquire by ${owner} must be busy`);
      const remaining = (outcome as { leaseRemainingMs: number }).leaseRemainingMs;
      assert.ok(
        remaining > 0 && remaining <= LONG_LEASE,
        `leaseRemainingMs ${remaining} is outside (0, ${LONG_LEASE}]`,
      );
    }
  },

  'busy names the owner token holding the lease, so a caller can tell whose lease it is': async ({
    coordinator,
  }) => {
    const key = newKey();
    const [orders, billing] = ['orders-api#8f1c', '@acme/billing-api#2b7e'];
    fenceOf(await coordinator.acquire(key, orders, LONG_LEASE));
    for (const owner of [billing, orders]) {
      const outcome = await coordinator.acquire(key, owner, LONG_LEASE);
      assert.equal(outcome.kind === 'busy' && outcome.holder, orders, `busy for ${owner}`);
    }
    assert.equal(await coordinator.release(key, orders), true);
    fenceOf(await coordinator.acquire(key, billing, LONG_LEASE));
    const outcome = await coordinator.acquire(key, orders, LONG_LEASE);
    assert.equal(outcome.kind === 'busy' && outcome.holder, billing);
  },

  'release frees the lease without storing anything': async (f) => {
    const key = newKey();
    const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    assert.equal(await f.coordinator.release(key, 'owner-a'), true);
    const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
    assert.ok(second > first, `fence ${second} after release is not above ${first}`);
  },

  'fences strictly increase across successive leaders': async (f) => {
    const key = newKey();
    const fences: number[] = [];
    for (let round = 0; round < 6; round += 1) {
      const owner = `owner-${round}`;
      fences.push(fenceOf(await f.coordinator.acquire(key, owner, LONG_LEASE)));
      const done =
        round % 2 === 0
          ? await f.coordinator.release(key, owner)
          : await f.coordinator.complete(key, owner, result('"r"', 0));
      assert.equal(done, true);
    }
    assertIncreasing(fences);
  },

  'an expired lease lets a new leader in with a higher fence': async (f) => {
    const key = newKey();
    const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
    await f.advance(EXPIRED);
    const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
    assertIncreasing([first, second]);
  },

  'fences keep increasing after a stored outcome expired': async (f) => {
    const key = newKey();
    const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    assert.equal(await f.coordinator.complete(key, 'owner-a', result('"r"', SHORT_TTL)), true);
    await f.advance(EXPIRED);
    const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', SHORT_TTL));
    await f.advance(EXPIRED);
    const third = fenceOf(await f.coordinator.acquire(key, 'owner-c', LONG_LEASE));
    assertIncreasing([first, second, third]);
  },

  'renew extends the lease of its owner': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
    assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), true);
    await f.advance(EXPIRED);
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'busy');
    assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), true);
    assert.equal(await f.coordinator.complete(key, 'owner-a', result('"a"', LONG_LEASE)), true);
  },

  'a non-owner can neither renew, complete nor release the lease': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
    assert.equal(await f.coordinator.renew(key, 'intruder', LONG_LEASE), false);
    assert.equal(await f.coordinator.complete(key, 'intruder', result('"x"', LONG_LEASE)), false);
    assert.equal(await f.coordinator.complete(key, 'intruder', error('"x"', LONG_LEASE)), false);
    assert.equal(await f.coordinator.release(key, 'intruder'), false);
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'busy');
    await assertCompletes(f.coordinator, key, 'owner-a', 'owner-b');
  },

  'an owner whose lease expired can neither renew, complete nor release': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
    await f.advance(EXPIRED);
    await assertLostLease(f.coordinator, key, 'owner-a');
    assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
  },

  'an old owner cannot renew, complete or release over the next leader': async (f) => {
    const key = newKey();
    fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
    await f.advance(EXPIRED);
    fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
    await assertLostLease(f.coordinator, key, 'owner-a');
    assert.equal((await f.coordinator.acquire(key, 'owner-c', LONG_LEASE)).kind, 'busy');
    await assertCompletes(f.coordinator, key, 'owner-b', 'owner-c');
  },

  [`${CONCURRENT_CALLERS} concurrent acquires on a free key elect exactly one leader`]: async (
    f,
  ) => {
    const outcomes = await acquireConcurrently(f.coordinator, newKey());
    assertOneLeader(outcomes);
  },

  [`${CONCURRENT_CALLERS} concurrent acquires after a lease expired elect exactly one leader`]:
    async (f) => {
      const key = newKey();
      const expiredFence = fenceOf(await f.coordinator.acquire(key, 'owner-old', SHORT_TTL));
      await f.advance(EXPIRED);
      const outcomes = await acquireConcurrently(f.coordinator, key);
      assertOneLeader(outcomes);
      const leader = outcomes.find((outcome) => outcome.kind === 'leader');
      assertIncreasing([expiredFence, fenceOf(leader!)]);
    },

  'distinct keys are independent': async (f) => {
    const [first, second] = [newKey(), newKey()];
    const firstFence = fenceOf(await f.coordinator.acquire(first, 'owner-a', LONG_LEASE));
    const secondFence = fenceOf(await f.coordinator.acquire(second, 'owner-b', LONG_LEASE));
    assert.notEqual(firstFence, secondFence, 'two live leases share a fence');
    assert.equal(await f.coordinator.complete(first, 'owner-a', result('"1"', LONG_LEASE)), true);
    assert.equal(await f.coordinator.renew(first, 'owner-b', LONG_LEASE), false);
    assert.equal((await f.coordinator.acquire(second, 'owner-c', LONG_LEASE)).kind, 'busy');
    assert.equal(await f.coordinator.release(second, 'owner-b'), true);
    assert.deepEqual(await f.coordinator.acquire(first, 'owner-c', LONG_LEASE), {
      kind: 'cached',
      payload: '"1"',
    });
    const next = fenceOf(await f.coordinator.acquire(second, 'owner-c', LONG_LEASE));
    assertIncreasing([secondFence, next]);
  },
};

/** `owner` no longer holds the lease on `key`: renew, complete and release all refuse. */
async function assertLostLease(
  coordinator: FlightCoordinator,
  key: string,
  owner: string,
): Promise<void> {
  assert.equal(await coordinator.renew(key, owner, LONG_LEASE), false);
  assert.equal(await coordinator.complete(key, owner, result(`"${owner}"`, LONG_LEASE)), false);
  assert.equal(await coordinator.release(key, owner), false);
}

/** `owner` still holds the lease: its completion is accepted and `reader` finds it cached. */
async function assertCompletes(
  coordinator: FlightCoordinator,
  key: string,
  owner: string,
  reader: string,
): Promise<void> {
  assert.equal(await coordinator.complete(key, owner, result(`"${owner}"`, LONG_LEASE)), true);
  assert.deepEqual(await coordinator.acquire(key, reader, LONG_LEASE), {
    kind: 'cached',
    payload: `"${owner}"`,
  });
}

async function acquireConcurrently(
  coordinator: FlightCoordinator,
  key: string,
): Promise<AcquireOutcome[]> {
  return Promise.all(
    Array.from({ length: CONCURRENT_CALLERS }, (_, index) =>
      coordinator.acquire(key, `owner-${index}`, LONG_LEASE),
    ),
  );
}

function assertOneLeader(outcomes: readonly AcquireOutcome[]): void {
  const count = (kind: AcquireOutcome['kind']) =>
    outcomes.filter((outcome) => outcome.kind === kind).length;
  assert.equal(count('leader'), 1);
  assert.equal(count('busy'), CONCURRENT_CALLERS - 1);
}
