import { OncelyError } from '../errors/oncely-error.js';

/**
 * The cross-process side of SingleFlight: leases, cached outcomes and completion notices for one
 * business key. Implementations: `InMemoryFlightCoordinator` (one process, the embedded default)
 * and `RedisFlightCoordinator` in `@oncely/redis`. Every method is one atomic step; every method
 * that changes a lease checks the caller's `owner` token first, so nobody releases, renews or
 * completes a lease they do not hold.
 *
 * Payloads are opaque strings produced by the engine's codec; a coordinator never parses them.
 * All durations are milliseconds.
 */
export interface FlightCoordinator {
  /**
   * One round trip deciding what the caller does next: a cached result or cached deterministic
   * error is returned as is; otherwise a free lease is taken (the caller leads, with a fencing
   * token that only ever grows per key, also after the key's lease and outcomes expired);
   * otherwise the lease's remaining time is reported.
   */
  acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome>;

  /**
   * Optional: the cached result or error of `key` that this process already holds, as `acquire`
   * would return it, answered at once without a round trip; `undefined` when it holds none (a
   * lease, nothing, or an outcome it would have to ask the backend for). The engine asks it
   * before anything else on every call, so it must be cheap and must never answer what
   * `acquire` would no longer return (an expired or evicted outcome).
   */
  peek?(key: string): HeldOutcome | undefined;

  /** Extends the lease if `owner` still holds it. `false` means the lease is lost. */
  renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean>;

  /**
   * If `owner` still holds the lease: stores the outcome (unless its TTL is 0), deletes the
   * lease and notifies waiters, atomically. `false` means the lease was lost and nothing was
   * stored.
   */
  complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean>;

  /**
   * If `owner` still holds the lease: deletes it and notifies waiters without storing anything
   * (a transient failure: the next caller may lead). `false` means the lease was lost.
   */
  release(key: string, owner: string): Promise<boolean>;

  /**
   * Resolves on the first completion or release notice for `key` after the call, or after
   * `timeoutMs` (whichever comes first), or when `signal` aborts. Never rejects: a missed notice
   * only costs a poll, since callers re-`acquire` afterwards.
   *
   * The engine calls it before the `acquire` whose answer it may have to wait on (except on a
   * caller's very first `acquire`, which must stay a single call), and aborts it when not needed,
   * so an implementation should register interest at the call, cheaply. One that needs a round
   * trip to subscribe may miss notices published meanwhile; it should keep that window short.
   *
   * Notices are owed only for a lease some `acquire` found busy, since the engine waits only
   * after such an answer: a coordinator may skip the notice of a flight nobody waited for.
   */
  waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;

  /** Releases connections this coordinator created (never those passed in by the user). */
  close(): Promise<void>;

  /**
   * Optional: what the coordinator works on, for the start-up line (`BackendReport.describe`),
   * e.g. `Redis redis://127.0.0.1:6379 (prefix oncely:)`; never a secret.
   */
  describe?(): string;

  /**
   * Optional: resolves once the backend answers, rejects within `timeoutMs` when it does not
   * (`BackendReport.probe`); the start-up then warns once and boots anyway.
   */
  probe?(timeoutMs: number): Promise<void>;
}

/** What `FlightCoordinator.acquire` decided, in one round trip. */
export type AcquireOutcome =
  | {
      /** The lease was free and is now the caller's: it runs the work. */
      readonly kind: 'leader';
      /** Fencing token of this lease, larger than that of every earlier lease on the key. */
      readonly fence: number;
    }
  | {
      /** A leader left a result that is still cached. */
      readonly kind: 'cached';
      /** The result, as the engine's codec wrote it. */
      readonly payload: string;
    }
  | {
      /** A leader left a deterministic error that is still cached. */
      readonly kind: 'failed';
      /** The error, as the engine's codec wrote it. */
      readonly payload: string;
    }
  | {
      /** Another caller holds the lease. */
      readonly kind: 'busy';
      /** Time left on that lease: at most how long before a caller may lead. */
      readonly leaseRemainingMs: number;
      /**
       * The owner token holding the lease. An engine whose tokens name its service
       * (`SingleFlightOptions.service`) reads whose lease it is from it.
       */
      readonly holder?: string;
    };

/** A cached result or error, as `FlightCoordinator.peek` returns it. */
export type HeldOutcome = Extract<AcquireOutcome, { readonly kind: 'cached' | 'failed' }>;

/** What a leader leaves behind: a result or a deterministic error, each with its own TTL. */
export type FlightOutcome =
  | {
      /** The work succeeded. */
      readonly kind: 'result';
      /** The result, encoded by the engine's codec; opaque to the coordinator. */
      readonly payload: string;
      /** How long later callers get it instead of running the work; 0 stores nothing. */
      readonly ttlMs: number;
    }
  | {
      /** The work failed in a way the failure policy says would repeat (e.g. a 4xx). */
      readonly kind: 'error';
      /** The error, encoded by the engine's codec; opaque to the coordinator. */
      readonly payload: string;
      /** How long later callers get it instead of running the work; 0 stores nothing. */
      readonly ttlMs: number;
    };

/**
 * Raised by a coordinator when its backend cannot be reached (connection refused, timeout).
 * The engine turns it into the `onCoordinatorDown` policy; anything else propagates.
 */
export class CoordinatorUnavailableError extends OncelyError {
  readonly code = 'coordinator_unavailable';

  constructor(
    /** Which backend failed, e.g. `redis`, as messages and events name it. */
    readonly backend: string,
    options?: ErrorOptions,
  ) {
    super(
      `The SingleFlight coordinator (${backend}) cannot be reached. Check that it is running and reachable, or set onCoordinatorDown: 'open' to run uncoordinated while it is down.`,
      options,
    );
  }
}
