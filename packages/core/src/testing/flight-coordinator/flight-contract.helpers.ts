import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type {
  AcquireOutcome,
  FlightCoordinator,
  FlightOutcome,
} from '../../flight/flight-coordinator.port.js';

/** A lease that outlives any case: it must still be held when the case checks it. */
export const LONG_LEASE = 10_000;
/** A TTL the cases let run out with `advance(EXPIRED)`. */
export const SHORT_TTL = 150;
export const EXPIRED = SHORT_TTL + 100;
/**
 * Real time left to implementations that subscribe asynchronously (one round trip) before the
 * notice is published: the port lets them miss notices published while they subscribe.
 */
export const SUBSCRIBE_SETTLE_MS = 50;
/** How long a notice may take to arrive before the case calls it lost; far above any real one. */
export const NOTICE_LIMIT_MS = 5_000;
export const CONCURRENT_CALLERS = 25;

export function newKey(): string {
  return `contract:${randomUUID()}`;
}

export function result(payload: string, ttlMs: number): FlightOutcome {
  return { kind: 'result', payload, ttlMs };
}

export function error(payload: string, ttlMs: number): FlightOutcome {
  return { kind: 'error', payload, ttlMs };
}

export function fenceOf(outcome: AcquireOutcome): number {
  assert.equal(outcome.kind, 'leader', `expected to lead, got ${JSON.stringify(outcome)}`);
  return (outcome as { fence: number }).fence;
}

export function assertIncreasing(fences: readonly number[]): void {
  for (let index = 1; index < fences.length; index += 1) {
    assert.ok(
      fences[index]! > fences[index - 1]!,
      `fences must strictly increase, got ${fences.join(', ')}`,
    );
  }
}

/**
 * A follower's `acquire` finding the lease busy, as the engine's always precedes its wait: a
 * coordinator may skip the completion notice of a lease nobody found busy.
 */
export async function follow(coordinator: FlightCoordinator, key: string): Promise<void> {
  assert.equal((await coordinator.acquire(key, 'owner-waiting', LONG_LEASE)).kind, 'busy');
}

/** Whether `promise` settles within `ms` of real time (a generous bound, not a measurement). */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
