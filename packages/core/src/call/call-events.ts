import type { OncelyEvent, OncelyEventListener, OncelyOutcome } from '../events/oncely-event.js';
import { OncelyEventDispatcher, type OncelyEventDraft } from '../events/oncely-event-dispatcher.js';
import type { Clock } from '../time/clock.js';
import { ForeignOwnerError } from '../errors/foreign-owner.error.js';

/** Hears the decisions of one call (its trace): the last one is the call's. */
export type CallDecisionObserver = (outcome: OncelyOutcome) => void;

/**
 * Reports the call layer's decisions. Nothing is built when nobody listens: most services run
 * without listeners, and an event costs more than the rest of a replay's bookkeeping.
 */
export class CallEvents {
  readonly #dispatcher: OncelyEventDispatcher;

  constructor(
    private readonly listeners: readonly OncelyEventListener[],
    private readonly clock: Clock,
    private readonly observer?: CallDecisionObserver,
  ) {
    this.#dispatcher = new OncelyEventDispatcher(listeners);
  }

  /** The same events for one call whose decisions `observer` hears as well. */
  observedBy(observer: CallDecisionObserver): CallEvents {
    return new CallEvents(this.listeners, this.clock, observer);
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
    this.observer?.(outcome);
    if (!this.#dispatcher.active) return;
    const event: OncelyEventDraft = { mechanism, outcome, operation, key };
    if (startedAt !== undefined) event.durationMs = this.clock.now() - startedAt;
    if (error !== undefined) event.error = error;
    if (error instanceof ForeignOwnerError) {
      event.owner = error.owner;
      event.foreignOwner = error.foreignOwner;
    }
    this.#dispatcher.emit(event);
  }

  /**
   * A decision an engine reported to the listeners itself (a SingleFlight's `executed`,
   * `joined`, …): only the call's observer hears of it here.
   */
  decided(outcome: OncelyOutcome): void {
    this.observer?.(outcome);
  }
}
