import { OncelyError } from '../errors/oncely-error.js';

/**
 * Another caller holds the flight for this key and this caller will not (`onBusy: 'reject'`) or
 * can no longer (`wait` elapsed) wait for it. HTTP layers map it to 409 with `Retry-After`
 * derived from `leaseRemainingMs`.
 */
export class FlightBusyError extends OncelyError {
  readonly code = 'flight_busy';

  constructor(
    /** The business key whose flight is held. */
    readonly key: string,
    /** Time left on the current leader's lease when this caller gave up; 0 if unknown. */
    readonly leaseRemainingMs: number,
    options?: ErrorOptions,
  ) {
    super(
      `Another execution of "${key}" is in progress (its lease has ${leaseRemainingMs} ms left). Retry after it completes, or let callers wait for its result with onBusy: 'wait' and a larger wait.`,
      options,
    );
  }
}
