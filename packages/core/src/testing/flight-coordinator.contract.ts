import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type {
  AcquireOutcome,
  FlightCoordinator,
  FlightOutcome,
} from '../flight/flight-coordinator.port.js';

/** One coordinator under test, with control over the time its TTLs see. */
export interface FlightCoordinatorFixture {
  readonly coordinator: FlightCoordinator;
  /**
   * Lets `ms` milliseconds pass for the coordinator's TTLs: move a manual clock, or really
   * sleep for a networked backend (the cases keep TTLs at a few hundred ms).
   */
  advance(ms: number): Promise<void>;
  /** Closes what the factory opened; called once per case, also when the case fails. */
  cleanup(): Promise<void>;
}

export type FlightCoordinatorFixtureFactory = () =>
  FlightCoordinatorFixture | Promise<FlightCoordinatorFixture>;

/** A named check that throws (`node:assert`) on failure; independent of any test runner. */
export interface FlightCoordinatorContractCase {
  readonly name: string;
  readonly run: () => Promise<void>;
}

/**
 * Registers contract cases (this suite's or any other with `{ name, run }` cases) with any
 * runner's `it`/`test`:
 *
 * ```ts
 * describe('MyFlightCoordinator', () => {
 *   registerContractCases(flightCoordinatorContract(factory), it);
 * });
 * ```
 *
 * which is `for (const c of cases) it(c.name, c.run)`.
 */
export function registerContractCases(
  cases: readonly { readonly name: string; readonly run: () => Promise<void> }[],
  test: (name: string, run: () => Promise<void>) => unknown,
): void {
  for (const contractCase of cases) test(contractCase.name, contractCase.run);
}

/** A lease that outlives any case: it must still be held when the case checks it. */
const LONG_LEASE = 10_000;
/** A TTL the cases let run out with `advance(EXPIRED)`. */
const SHORT_TTL = 150;
const EXPIRED = SHORT_TTL + 100;
/**
 * Real time left to implementations that subscribe asynchronously (one round trip) before the
 * notice is published: the port lets them miss notices published while they subscribe.
 */
const SUBSCRIBE_SETTLE_MS = 50;
/** How long a notice may take to arrive before the case calls it lost; far above any real one. */
const NOTICE_LIMIT_MS = 5_000;
const CONCURRENT_CALLERS = 25;

/**
 * The behaviour every `FlightCoordinator` must show, as runner-agnostic cases (see
 * `registerContractCases`). Each case builds its own fixture from `factory`, uses fresh random
 * keys, and never asserts on durations.
 */
/**
 * A follower's `acquire` finding the lease busy, as the engine's always precedes its wait: a
 * coordinator may skip the completion notice of a lease nobody found busy.
 */
async function follow(coordinator: FlightCoordinator, key: string): Promise<void> {
  assert.equal((await coordinator.acquire(key, 'owner-waiting', LONG_LEASE)).kind, 'busy');
}

export function flightCoordinatorContract(
  factory: FlightCoordinatorFixtureFactory,
): FlightCoordinatorContractCase[] {
  const define = (name: string, body: (fixture: FlightCoordinatorFixture) => Promise<void>) => ({
    name,
    run: async () => {
      const fixture = await factory();
      try {
        await body(fixture);
      } finally {
        await fixture.cleanup();
      }
    },
  });

  return [
    define('acquire on a free key leads with a positive integer fence', async ({ coordinator }) => {
      const outcome = await coordinator.acquire(newKey(), 'owner-a', LONG_LEASE);
      const fence = fenceOf(outcome);
      assert.ok(
        Number.isSafeInteger(fence) && fence > 0,
        `fence ${fence} is not a positive integer`,
      );
    }),

    define('acquire while the lease is held is busy with the lease remaining time', async (f) => {
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
    }),

    define('complete stores the result and frees the lease: acquire is cached', async (f) => {
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
    }),

    define('complete with an error outcome stores it: acquire is failed', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      const payload = '{"name":"BadRequest","status":400}';
      assert.equal(await f.coordinator.complete(key, 'owner-a', error(payload, LONG_LEASE)), true);
      assert.deepEqual(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE), {
        kind: 'failed',
        payload,
      });
    }),

    define('payloads come back exactly, large ones included', async (f) => {
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
    }),

    define('an outcome with ttl 0 stores nothing and frees the lease', async (f) => {
      const key = newKey();
      for (const outcome of [result('"r"', 0), error('"e"', 0)]) {
        fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
        assert.equal(await f.coordinator.complete(key, 'owner-a', outcome), true);
      }
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
    }),

    define('release frees the lease without storing anything', async (f) => {
      const key = newKey();
      const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.release(key, 'owner-a'), true);
      const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
      assert.ok(second > first, `fence ${second} after release is not above ${first}`);
    }),

    define('fences strictly increase across successive leaders', async (f) => {
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
    }),

    define('an expired lease lets a new leader in with a higher fence', async (f) => {
      const key = newKey();
      const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
      await f.advance(EXPIRED);
      const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
      assertIncreasing([first, second]);
    }),

    define('fences keep increasing after a stored outcome expired', async (f) => {
      const key = newKey();
      const first = fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"r"', SHORT_TTL)), true);
      await f.advance(EXPIRED);
      const second = fenceOf(await f.coordinator.acquire(key, 'owner-b', SHORT_TTL));
      await f.advance(EXPIRED);
      const third = fenceOf(await f.coordinator.acquire(key, 'owner-c', LONG_LEASE));
      assertIncreasing([first, second, third]);
    }),

    define('renew extends the lease of its owner', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
      assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), true);
      await f.advance(EXPIRED);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'busy');
      assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), true);
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"a"', LONG_LEASE)), true);
    }),

    define('a non-owner can neither renew, complete nor release the lease', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.renew(key, 'intruder', LONG_LEASE), false);
      assert.equal(await f.coordinator.complete(key, 'intruder', result('"x"', LONG_LEASE)), false);
      assert.equal(await f.coordinator.complete(key, 'intruder', error('"x"', LONG_LEASE)), false);
      assert.equal(await f.coordinator.release(key, 'intruder'), false);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'busy');
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"a"', LONG_LEASE)), true);
      assert.deepEqual(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE), {
        kind: 'cached',
        payload: '"a"',
      });
    }),

    define('an owner whose lease expired can neither renew, complete nor release', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
      await f.advance(EXPIRED);
      assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), false);
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"a"', LONG_LEASE)), false);
      assert.equal(await f.coordinator.release(key, 'owner-a'), false);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
    }),

    define('an old owner cannot renew, complete or release over the next leader', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', SHORT_TTL));
      await f.advance(EXPIRED);
      fenceOf(await f.coordinator.acquire(key, 'owner-b', LONG_LEASE));
      assert.equal(await f.coordinator.renew(key, 'owner-a', LONG_LEASE), false);
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"a"', LONG_LEASE)), false);
      assert.equal(await f.coordinator.release(key, 'owner-a'), false);
      assert.equal((await f.coordinator.acquire(key, 'owner-c', LONG_LEASE)).kind, 'busy');
      assert.equal(await f.coordinator.complete(key, 'owner-b', result('"b"', LONG_LEASE)), true);
      assert.deepEqual(await f.coordinator.acquire(key, 'owner-c', LONG_LEASE), {
        kind: 'cached',
        payload: '"b"',
      });
    }),

    define(
      `${CONCURRENT_CALLERS} concurrent acquires on a free key elect exactly one leader`,
      async (f) => {
        const outcomes = await acquireConcurrently(f.coordinator, newKey());
        assert.equal(count(outcomes, 'leader'), 1);
        assert.equal(count(outcomes, 'busy'), CONCURRENT_CALLERS - 1);
      },
    ),

    define(
      `${CONCURRENT_CALLERS} concurrent acquires after a lease expired elect exactly one leader`,
      async (f) => {
        const key = newKey();
        const expiredFence = fenceOf(await f.coordinator.acquire(key, 'owner-old', SHORT_TTL));
        await f.advance(EXPIRED);
        const outcomes = await acquireConcurrently(f.coordinator, key);
        assert.equal(count(outcomes, 'leader'), 1);
        assert.equal(count(outcomes, 'busy'), CONCURRENT_CALLERS - 1);
        const leader = outcomes.find((outcome) => outcome.kind === 'leader');
        assertIncreasing([expiredFence, fenceOf(leader!)]);
      },
    ),

    define('a stored result expires after its TTL', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.complete(key, 'owner-a', result('"r"', SHORT_TTL)), true);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'cached');
      await f.advance(EXPIRED);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
    }),

    define('a stored error expires after its TTL', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      assert.equal(await f.coordinator.complete(key, 'owner-a', error('"e"', SHORT_TTL)), true);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'failed');
      await f.advance(EXPIRED);
      assert.equal((await f.coordinator.acquire(key, 'owner-b', LONG_LEASE)).kind, 'leader');
    }),

    define('waitForNotice resolves on complete', async ({ coordinator }) => {
      const key = newKey();
      fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
      await follow(coordinator, key);
      await expectNotice(coordinator, key, () =>
        coordinator.complete(key, 'owner-a', result('"r"', LONG_LEASE)),
      );
    }),

    define('waitForNotice resolves on a completion storing nothing', async ({ coordinator }) => {
      const key = newKey();
      fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
      await follow(coordinator, key);
      await expectNotice(coordinator, key, () =>
        coordinator.complete(key, 'owner-a', result('"r"', 0)),
      );
    }),

    define('waitForNotice resolves on release', async ({ coordinator }) => {
      const key = newKey();
      fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
      await follow(coordinator, key);
      await expectNotice(coordinator, key, () => coordinator.release(key, 'owner-a'));
    }),

    define('waitForNotice resolves after its timeout without a notice', async ({ coordinator }) => {
      const wait = coordinator.waitForNotice(newKey(), 20);
      assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the wait never timed out');
    }),

    define('waitForNotice resolves when its signal aborts', async ({ coordinator }) => {
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
    }),

    define('one notice wakes every wait pending on the key', async ({ coordinator }) => {
      const key = newKey();
      fenceOf(await coordinator.acquire(key, 'owner-a', LONG_LEASE));
      await follow(coordinator, key);
      const controller = new AbortController();
      try {
        const waits = [1, 2, 3].map(() =>
          coordinator.waitForNotice(key, 60_000, controller.signal),
        );
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
    }),

    define('ending one wait leaves the other waits on the key listening', async (f) => {
      const key = newKey();
      fenceOf(await f.coordinator.acquire(key, 'owner-a', LONG_LEASE));
      await follow(f.coordinator, key);
      const [ended, listening] = [new AbortController(), new AbortController()];
      try {
        const shortWait = f.coordinator.waitForNotice(key, 20);
        const abortedWait = f.coordinator.waitForNotice(key, 60_000, ended.signal);
        const wait = f.coordinator.waitForNotice(key, 60_000, listening.signal);
        ended.abort();
        await Promise.all([shortWait, abortedWait]);
        await sleep(SUBSCRIBE_SETTLE_MS);
        assert.equal(await f.coordinator.complete(key, 'owner-a', result('"r"', LONG_LEASE)), true);
        assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
      } finally {
        ended.abort();
        listening.abort();
      }
    }),

    define('notices are per key', async ({ coordinator }) => {
      const [watched, other] = [newKey(), newKey()];
      fenceOf(await coordinator.acquire(watched, 'owner-a', LONG_LEASE));
      fenceOf(await coordinator.acquire(other, 'owner-a', LONG_LEASE));
      await follow(coordinator, watched);
      await follow(coordinator, other);
      const controller = new AbortController();
      try {
        const wait = coordinator.waitForNotice(watched, 60_000, controller.signal);
        await sleep(SUBSCRIBE_SETTLE_MS);
        assert.equal(await coordinator.complete(other, 'owner-a', result('"o"', LONG_LEASE)), true);
        assert.equal(
          await settledWithin(wait, 200),
          false,
          'a notice for another key woke the wait',
        );
        assert.equal(await coordinator.release(watched, 'owner-a'), true);
        assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
      } finally {
        controller.abort();
      }
    }),

    define('distinct keys are independent', async (f) => {
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
    }),
  ];
}

function newKey(): string {
  return `contract:${randomUUID()}`;
}

function result(payload: string, ttlMs: number): FlightOutcome {
  return { kind: 'result', payload, ttlMs };
}

function error(payload: string, ttlMs: number): FlightOutcome {
  return { kind: 'error', payload, ttlMs };
}

function fenceOf(outcome: AcquireOutcome): number {
  assert.equal(outcome.kind, 'leader', `expected to lead, got ${JSON.stringify(outcome)}`);
  return (outcome as { fence: number }).fence;
}

function assertIncreasing(fences: readonly number[]): void {
  for (let index = 1; index < fences.length; index += 1) {
    assert.ok(
      fences[index]! > fences[index - 1]!,
      `fences must strictly increase, got ${fences.join(', ')}`,
    );
  }
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

function count(outcomes: readonly AcquireOutcome[], kind: AcquireOutcome['kind']): number {
  return outcomes.filter((outcome) => outcome.kind === kind).length;
}

/** Starts a long wait, publishes a notice with `notify`, and expects the wait to end on it. */
async function expectNotice(
  coordinator: FlightCoordinator,
  key: string,
  notify: () => Promise<boolean>,
): Promise<void> {
  const controller = new AbortController();
  try {
    const wait = coordinator.waitForNotice(key, 60_000, controller.signal);
    await sleep(SUBSCRIBE_SETTLE_MS);
    assert.equal(await notify(), true);
    assert.equal(await settledWithin(wait, NOTICE_LIMIT_MS), true, 'the notice never came');
  } finally {
    controller.abort();
  }
}

/** Whether `promise` settles within `ms` of real time (a generous bound, not a measurement). */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), limit]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
