import { LeaseLostError } from '../errors/lease-lost.error.js';
import type { LeaseWatchdog } from '../lease/lease-watchdog.js';
import { FlightBusyError } from './flight-busy.error.js';
import { CoordinatorUnavailableError } from './flight-coordinator.port.js';
import type { FailurePolicy, FlightResult } from './flight.types.js';
import type { ResolvedFlightOptions } from './single-flight-options.js';

/** What a flight hands to its callers; `storeError` explains why a result was not stored. */
export interface Landing<T> extends FlightResult<T> {
  readonly storeError?: unknown;
}

/** A flight running in this process, as the callers joining it see it. */
export interface LocalFlight {
  readonly landing: Promise<Landing<unknown>>;
  /** The policy of the caller that started it, which decides what its failures mean. */
  readonly failurePolicy: FailurePolicy;
  readonly leaseTtl: number;
  /** `performance.now()` when it started. */
  readonly since: number;
  readonly leadership: Leadership;
}

/**
 * The lease a local flight holds once it leads: to ask whether an operator freed it, and to hear
 * that its watchdog found it lost, which ends the flight's claim on the key in this process even
 * while its work still runs.
 */
export class Leadership {
  lease?: LeaseWatchdog;
  /**
   * Set once the flight leads after another run of the key failed or vanished: it is the run
   * again its waiters get, and its failure is theirs too.
   */
  retry = false;
  /**
   * While the flight waits for a lease held elsewhere: when that lease runs out, as last
   * reported (`performance.now()` time).
   */
  heldElsewhereUntil?: number;
  #markAnswered!: () => void;
  /** Resolves once the coordinator answered the flight's first acquire, or failed to. */
  readonly answered = new Promise<void>((resolve) => {
    this.#markAnswered = resolve;
  });
  #markLost!: () => void;
  /** Resolves `{ freed }` once the lease is lost; never otherwise. */
  readonly lost = new Promise<JoinOutcome>((resolve) => {
    this.#markLost = () => resolve({ freed: true });
  });

  markLost(): void {
    this.#markLost();
  }

  markAnswered(): void {
    this.#markAnswered();
  }
}

/**
 * Whether a flight of this process still holds its lease, asked of the coordinator now: an
 * operator may have freed it (force-release) while its work still runs, and then it no longer
 * stands for the key. For a caller about to be refused in favour of that work; concurrent askers
 * share one question. A flight that does not lead (yet) holds nothing to ask about.
 */
export async function stillLeads(flight: LocalFlight): Promise<boolean> {
  const { lease } = flight.leadership;
  return lease === undefined || lease.confirm();
}

export type JoinOutcome =
  { readonly landed: Landing<unknown> } | { readonly failed: unknown } | { readonly freed: true };

/** The refusal of a caller that may not wait (any more) for `flight`, with its lease's time left. */
export function flightBusy(flight: LocalFlight, key: string): FlightBusyError {
  const leaseEnd = flight.leadership.heldElsewhereUntil ?? flight.since + flight.leaseTtl;
  return new FlightBusyError(key, Math.max(1, Math.ceil(leaseEnd - performance.now())));
}

/**
 * Waits for a flight of this process as a follower on another node would wait for its lease:
 * `onBusy: 'wait'` callers give up with `FlightBusyError` once their own `wait` is over.
 * Resolves with the flight's outcome, failures included; rejects only on that time-out.
 */
export function joinWithin(
  flight: LocalFlight,
  key: string,
  settings: ResolvedFlightOptions,
  deadline: number,
): Promise<JoinOutcome> {
  const settled = flight.landing.then(
    (landed): JoinOutcome => ({ landed }),
    (failed: unknown): JoinOutcome => ({ failed }),
  );
  // `reject` callers get here while the flight only reads (a kept result), or when their caller
  // refuses duplicates of running work itself (`letRejectingCallersJoin`).
  if (settings.onBusy !== 'wait') return settled;
  return new Promise<JoinOutcome>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(flightBusy(flight, key)),
      Math.max(0, Math.ceil(deadline - performance.now())),
    );
    timer.unref();
    void settled.then((outcome) => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
}

/**
 * Whether a caller that joined a failed flight takes over, as a follower on another node whose
 * leader released the lease would: only callers that wait, and only after a transient failure of
 * the flight's own first run. The failure of a run that itself took over after a failure is
 * shared (each waiter gets one run again, not one each), and so is a failure the flight only read
 * from the coordinator. A lost or expired lease is not transient either (the work may still be
 * running, or ran past `maxDuration`), nor is a deterministic failure or a coordinator outage.
 * A joiner whose own `wait` outlasts the flight's goes on waiting.
 */
export function mayRunAgain(
  flight: LocalFlight,
  error: unknown,
  settings: ResolvedFlightOptions,
): boolean {
  if (settings.onBusy !== 'wait') return false;
  if (error instanceof LeaseLostError || error instanceof CoordinatorUnavailableError) return false;
  if (error instanceof FlightBusyError) return true;
  const { leadership, failurePolicy } = flight;
  if (leadership.lease === undefined || leadership.retry) return false;
  try {
    return failurePolicy.classify(error) === 'transient';
  } catch {
    return false;
  }
}
