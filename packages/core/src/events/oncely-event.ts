/**
 * Every decision oncely takes is reported as one event. Listeners must not throw (a throwing
 * listener is isolated and ignored) and must not log raw input: events carry keys and hashes only.
 */
export type OncelyOutcome =
  | 'executed'
  | 'joined'
  | 'shared'
  | 'cached'
  | 'replayed'
  | 'conflict'
  | 'mismatch'
  | 'foreign_owner'
  | 'foreign_claim'
  | 'refused'
  | 'lease_lost'
  | 'coordinator_down'
  | 'failed';

/** One decision oncely took, as every `OncelyEventListener` receives it. */
export interface OncelyEvent {
  /** Which mechanism decided: a `@SingleFlight` route or an idempotent one. */
  readonly mechanism: 'single-flight' | 'idempotency';
  /** What was decided for this call. */
  readonly outcome: OncelyOutcome;
  /** `namespace:operation:version`, when known. */
  readonly operation?: string;
  /**
   * The business key (or identity) concerned; never raw input. For `refused` (a message or a job
   * whose keys could not be built: a missing or unusable field), the operation.
   */
  readonly key: string;
  /** Milliseconds from the call's start to this decision, where the deciding layer measures it. */
  readonly durationMs?: number;
  /**
   * `foreign_owner`: the service of the call that met another service's record. `foreign_claim`
   * (at start-up or on a heartbeat, another service holds a live claim on the same operation;
   * `key` is then the operation): this app's service.
   */
  readonly owner?: string;
  /**
   * `foreign_owner`: the service whose record was met (and left untouched). `foreign_claim`: the
   * service holding the other claim.
   */
  readonly foreignOwner?: string;
  /** The error behind the outcome, when one caused it (`failed`, `refused`, `lease_lost`, …). */
  readonly error?: unknown;
}

/**
 * Receives every `OncelyEvent`, synchronously in the call's path: keep it cheap and hand slow
 * work (shipping logs, remote metrics) to something asynchronous.
 */
export type OncelyEventListener = (event: OncelyEvent) => void;
