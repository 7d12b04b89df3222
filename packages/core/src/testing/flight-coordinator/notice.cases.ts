import assert from 'node:assert/strict';
import type { FlightCoordinator } from '../../flight/flight-coordinator.port.js';
import type { FlightCases, FlightCoordinatorFixture } from './flight-coordinator.fixture.js';
import {
  fenceOf,
  follow,
  LONG_LEASE,
  newKey,
  NOTICE_LIMIT_MS,
  result,
  settledWithin,
  sleep,
  SUBSCRIBE_SETTLE_MS,
} from './flight-contract.helpers.js';

/** `waitForNotice`: woken by the end of a lease on its key only, or by its timeout or signal. */
export const noticeCases: FlightCases = {
  'waitForNotice resolves on complete': noticeOn((coordinator, key) =>
    coordinator.complete(key, 'owner-a', result('"r"', LONG_LEASE)),
  ),

  'waitForNotice resolves on a completion storing nothing': noticeOn((coordinator, key) =>
    coordinator.complete(key, 'owner-a', result('"r"', 0)),
  ),

  'waitForNotice resolves on release': noticeOn((coordinator, key) =>
    coordinator.release(key, 'owner-a'),
  ),

  'waitForNotice resolves after its timeout without a notice': async ({ coordinator }) => {
    const wait = coordinator.waitForNotice(newKey(), 20);
    assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the wait never timed out');
  },

  'waitForNotice resolves when its signal aborts': async ({ coordinator }) => {
    const controller = new AbortController();
    const wait = coordinator.waitForNotice(newKey(), 60_000, controller.signal);
    controller.abort();
    assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'abort did not end the wait');
    const aborted = coordinator.waitForNotice(newKey(), 60_000, controller.signal);
    assert.equal(
      await settledWithin(aborted, NOTICE_LIMIT_MS),
      true,
      'an already aborted signal did not end the wait',
    );
  },

  'one notice wakes every wait pending on the key': async ({ coordinator }) => {
    const key = await leaseFollowed(coordinator);
    const controller = new AbortController();
    try {
      const waits = [1, 2, 3].map(() => coordinator.waitForNotice(key, 60_000, controller.signal));
      await sleep(SUBSCRIBE_SETTLE_MS);
      assert.equal(await coordinator.release(key, 'owner-a'), true);
      assert.equal(
        await settledWithin(Promise.all(waits), NOTICE_LIMIT_MS),
        true,
        'not every wait was woken',
      );
    } finally {
      controller.abort();
    }
  },

  'ending one wait leaves the other waits on the key listening': async ({ coordinator }) => {
    const key = await leaseFollowed(coordinator);
    const [ended, listening] = [new AbortController(), new AbortController()];
    try {
      const shortWait = coordinator.waitForNotice(key, 20);
      const abortedWait = coordinator.waitForNotice(key, 60_000, ended.signal);
      const wait = coordinator.waitForNotice(key, 60_000, listening.signal);
      ended.abort();
      await Promise.all([shortWait, abortedWait]);
      await sleep(SUBSCRIBE_SETTLE_MS);
      assert.equal(await coordinator.complete(key, 'owner-a', result('"r"', LONG_LEASE)), true);
      assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
    } finally {
      ended.abort();
      listening.abort();
    }
  },

  'notices are per key': async ({ coordinator }) => {
    const [watched, other] = [await leaseFollowed(coordinator), await leaseFollowed(coordinator)];
    const controller = new AbortController();
    try {
      const wait = coordinator.waitForNotice(watched, 60_000, controller.signal);
      await sleep(SUBSCRIBE_SETTLE_MS);
      assert.equal(await coordinator.complete(other, 'owner-a', result('"o"', LONG_LEASE)), true);
      assert.equal(await settledWithin(wait, 200), false, 'a notice for another key woke the wait');
      assert.equal(await coordinator.release(watched, 'owner-a'), true);
      assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
    } finally {
      controller.abort();
    }
  },
};

/** A fresh key leased by `owner-a` and found busy by a follower, as before any real wait. */
async function leaseFollowed(coordinator: FlightCoordinator): Promise<string> {
  const key = newKey();
  fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
  await follow(coordinator, key);
  return key;
}

/** A case: a long wait on a followed lease ends when `notify` ends the lease. */
function noticeOn(notify: (coordinator: FlightCoordinator, key: string) => Promise<boolean>) {
  return async ({ coordinator }: FlightCoordinatorFixture) => {
    const key = await leaseFollowed(coordinator);
    const controller = new AbortController();
    try {
      const wait = coordinator.waitForNotice(key, 60_000, controller.signal);
      await sleep(SUBSCRIBE_SETTLE_MS);
      assert.equal(await notify(coordinator, key), true);
      assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
    } finally {
      controller.abort();
    }
  };
}
