import type { AcquireOutcome, FlightCoordinator } from '@oncely/core';

/**
 * The real coordinator, passed through untouched, with a hook on what `acquire` answered: lets a
 * test wait until a follower really is waiting instead of sleeping and hoping.
 */
export function observed(
  coordinator: FlightCoordinator,
  onAcquire: (outcome: AcquireOutcome) => void,
): FlightCoordinator {
  return {
    acquire: async (key, owner, ttl) => {
      const outcome = await coordinator.acquire(key, owner, ttl);
      onAcquire(outcome);
      return outcome;
    },
    renew: (key, owner, ttl) => coordinator.renew(key, owner, ttl),
    complete: (key, owner, outcome) => coordinator.complete(key, owner, outcome),
    release: (key, owner) => coordinator.release(key, owner),
    waitForNotice: (key, timeout, signal) => coordinator.waitForNotice(key, timeout, signal),
    close: () => coordinator.close(),
  };
}

/** A promise with its resolver, to hold work until the test lets it go. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { open, opened };
}
