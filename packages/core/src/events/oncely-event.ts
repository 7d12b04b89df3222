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
  | 'lease_lost'
  | 'coordinator_down'
  | 'failed';

export interface OncelyEvent {
  readonly mechanism: 'single-flight' | 'idempotency';
  readonly outcome: OncelyOutcome;
  /** `namespace:operation:version`, when known. */
  readonly operation?: string;
  /** The business key (or identity) concerned; never raw input. */
  readonly key: string;
  readonly durationMs?: number;
  readonly error?: unknown;
}

export type OncelyEventListener = (event: OncelyEvent) => void;
