import type { OncelyEvent, OncelyEventListener, OncelyOutcome } from '../events/oncely-event.js';
import { OncelyEventDispatcher, type OncelyEventDraft } from '../events/oncely-event-dispatcher.js';
import type { Clock } from '../time/clock.js';

/**
 * Reports the call layer's decisions. Nothing is built when nobody listens: most services run
 * without listeners, and an event costs more than the rest of a replay's bookkeeping.
 */
export class CallEvents {
  readonly #dispatcher: OncelyEventDispatcher;

  constructor(
    listeners: readonly OncelyEventListener[],
    private readonly clock: Clock,
  ) {
    this.#dispatcher = new OncelyEventDispatcher(listeners);
  }

  /** One decision on `key`; with `startedAt`, how long the call took until it. */
  emit(
    mechanism: OncelyEvent['mechanism'],
    outcome: OncelyOutcome,
    operation: string,
    key: string,
    startedAt?: number,
    error?: unknown,
  ): void {
    if (!this.#dispatcher.active) return;
    const event: OncelyEventDraft = { mechanism, outcome, operation, key };
    if (startedAt !== undefined) event.durationMs = this.clock.now() - startedAt;
    if (error !== undefined) event.error = error;
    this.#dispatcher.emit(event);
  }
}
