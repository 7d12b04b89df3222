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
  | 'refused'
  | 'lease_lost'
  | 'coordinator_down'
  | 'failed';

export interface OncelyEvent {
  readonly mechanism: 'single-flight' | 'idempotency';
  readonly outcome: OncelyOutcome;
  /** `namespace:operation:version`, when known. */
  readonly operation?: string;
  /**
   * The business key (or identity) concerned; never raw input. For `refused` (a message or a job
   * whose keys could not be built: a missing or unusable field), the operation.
   */
  readonly key: string;
  readonly durationMs?: number;
  readonly error?: unknown;
}

export type OncelyEventListener = (event: OncelyEvent) => void;
