/**
 * Public shapes of `SingleFlight.run`. All durations are milliseconds.
 */

/** How a caller obtained its result. */
export type FlightSource = 'executed' | 'joined' | 'shared' | 'cached';

/** What `SingleFlight.run` resolves with, for the leader and every caller sharing its flight. */
export interface FlightResult<T> {
  /** The work's result; a follower gets its own copy, decoded from what the leader kept. */
  readonly value: T;
  /** How this caller obtained it. */
  readonly source: FlightSource;
}

/** Handed to the leader's work. */
export interface FlightContext {
  /** The business key of the flight. */
  readonly key: string;
  /**
   * Fencing token of this leadership; strictly greater than any earlier leader's for the key.
   * 0 when the work runs uncoordinated (`onCoordinatorDown: 'open'` with the coordinator down).
   */
  readonly fence: number;
  /** Fires when the lease is lost (renewal refused or failed): stop and do not commit. */
  readonly signal: AbortSignal;
}

/** The work a flight runs once for all its callers; it runs only on the leader. */
export type FlightWork<T> = (context: FlightContext) => Promise<T>;

/** Decides whether a failure of the work is shared with waiters or lets one of them retry. */
export interface FailurePolicy {
  /**
   * `deterministic`: the same input would fail the same way (a validation error); it is shared
   * with waiters and cached for `errorTtl`. `transient`: the lease is released so a waiter may
   * run the work again.
   */
  classify(error: unknown): 'deterministic' | 'transient';
  /** Turns a deterministic error into a JSON-compatible value that crosses processes. */
  serialize(error: unknown): unknown;
  /** Rebuilds the error a follower throws from what `serialize` produced. */
  deserialize(serialized: unknown): Error;
}

/** How one flight runs: lease, caching of its outcome, and what its followers do. */
export interface FlightOptions {
  /** Lease time-to-live; the watchdog renews at a fraction of it while the work runs. */
  readonly leaseTtl?: number;
  /**
   * How long a result stays cached after the flight; 0 = not cached. The engine keeps every
   * result at least its `handoffTtl` so followers still waiting can pick it up.
   */
  readonly resultTtl?: number;
  /** How long a deterministic error stays cached; 0 = not cached (same `handoffTtl` floor). */
  readonly errorTtl?: number;
  /** How long a follower waits for the leader before `FlightBusyError`. */
  readonly wait?: number;
  /** `reject`: a follower fails at once with `FlightBusyError` instead of waiting. */
  readonly onBusy?: 'wait' | 'reject';
  /**
   * Which failures are shared with waiters and cached for `errorTtl`. Default
   * `transientFailurePolicy`: none; `HttpStatusFailurePolicy` shares deterministic HTTP 4xx.
   */
  readonly failurePolicy?: FailurePolicy;
  /** `open`: run the work uncoordinated when the coordinator is unreachable; `closed`: throw. */
  readonly onCoordinatorDown?: 'open' | 'closed';
}

/** Options of one `SingleFlight.run` call: flight options plus what events report. */
export interface FlightRunOptions extends FlightOptions {
  /** `namespace:operation:version`, reported in events. */
  readonly operation?: string;
  /**
   * The operation is declared `shared: true`: a lease of another service
   * (`SingleFlightOptions.service`) on the key is waited for as any other, not refused.
   */
  readonly shared?: boolean;
  /**
   * The caller only reads what other callers keep (an HTTP `HEAD` beside its `GET`): it joins a
   * flight running in this process, follows a lease held elsewhere, or reads the cached outcome,
   * but never leads. Where it would lead, it lets the lease go at once and runs its work
   * uncoordinated: nothing of that run is stored, and nobody joins it; after a transient failure
   * it is never the joiner that runs the work again for the others.
   */
  readonly neverLead?: boolean;
}
