import { LeaseLostError } from '../errors/lease-lost.error.js';
import { LeaseWatchdog } from '../lease/lease-watchdog.js';
import type { FlightCoordinator, FlightOutcome } from './flight-coordinator.port.js';
import type { FlightOutcomes } from './flight-outcomes.js';
import type { FlightContext, FlightWork } from './flight.types.js';
import type { Landing, Leadership } from './local-flight.js';
import { MaxDurationExceededError } from './max-duration-exceeded.error.js';
import type { ResolvedFlightOptions } from './single-flight-options.js';

/**
 * A SingleFlight leader's run: the work under a renewed lease, then its outcome completed at the
 * coordinator (a result, a failure to share) or the lease released for a waiter to run again.
 */
export class FlightLeader {
  constructor(
    private readonly coordinator: FlightCoordinator,
    private readonly outcomes: FlightOutcomes,
    /** Reports a coordinator that failed a call the run survives. */
    private readonly coordinatorDown: (
      key: string,
      operation: string | undefined,
      error: unknown,
    ) => void,
  ) {}

  /** Runs `work` as the leader holding `fence`, and completes the flight with its outcome. */
  async lead<T>(
    key: string,
    owner: string,
    fence: number,
    leaseSince: number,
    work: FlightWork<T>,
    settings: ResolvedFlightOptions,
    operation: string | undefined,
    leadership: Leadership,
    /** Whether this run takes over after a failed one: its own failure is then shared. */
    retry: boolean,
  ): Promise<Landing<T>> {
    const { leaseTtl } = settings;
    leadership.retry = retry;
    const watchdog = new LeaseWatchdog({
      key,
      fence,
      ttl: leaseTtl,
      since: leaseSince,
      renew: () => this.coordinator.renew(key, owner, leaseTtl),
      onRenewError: (error) => this.coordinatorDown(key, operation, error),
      onLost: () => leadership.markLost(),
    });
    leadership.lease = watchdog;
    const context: FlightContext = {
      key,
      fence,
      get signal() {
        return watchdog.signal;
      },
    };
    let value: T;
    try {
      value = await work(context);
    } catch (error) {
      watchdog.stop();
      // An expiry is not a transient failure: waiters get it instead of running the work again.
      const expired = error instanceof MaxDurationExceededError;
      if (!expired && watchdog.lostWith) throw leaseLost(watchdog.lostWith, error);
      const outcome = expired
        ? this.outcomes.expiry(error)
        : this.outcomes.failure(error, settings, retry);
      await this.settle(key, owner, outcome, operation);
      throw error;
    }
    watchdog.stop();
    if (watchdog.lostWith) throw watchdog.lostWith;

    const { outcome, storeError } = this.outcomes.result(value, settings);
    let completed: boolean;
    try {
      completed = await this.coordinator.complete(key, owner, outcome);
    } catch (error) {
      // The work is done: its caller keeps the result even though nobody else will see it.
      this.coordinatorDown(key, operation, error);
      return { value, source: 'executed', storeError: storeError ?? error };
    }
    if (!completed) throw watchdog.lostAtCompletion();
    return { value, source: 'executed', storeError };
  }

  /** Stores a failure's outcome, or releases the lease for a waiter to run the work again. */
  async settle(
    key: string,
    owner: string,
    outcome: FlightOutcome | undefined,
    operation: string | undefined,
  ): Promise<void> {
    try {
      if (outcome === undefined) await this.coordinator.release(key, owner);
      else await this.coordinator.complete(key, owner, outcome);
    } catch (coordinatorError) {
      this.coordinatorDown(key, operation, coordinatorError);
    }
  }
}

/** The caller learns the lease was lost whatever the work did after the signal fired. */
function leaseLost(lost: LeaseLostError, workError: unknown): LeaseLostError {
  if (workError === lost) return lost;
  return new LeaseLostError(lost.identity, lost.fence, { reason: lost.reason, cause: workError });
}
