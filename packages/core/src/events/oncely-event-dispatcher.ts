import type { OncelyEvent, OncelyEventListener } from './oncely-event.js';

/** An event being filled in before `emit`: optional members are set only when present. */
export type OncelyEventDraft = { -readonly [K in keyof OncelyEvent]: OncelyEvent[K] };

/** Delivers events to listeners, isolating the call from any listener that throws or rejects. */
export class OncelyEventDispatcher {
  constructor(private readonly listeners: readonly OncelyEventListener[]) {}

  /** Whether anyone listens: callers skip building events nobody reads. */
  get active(): boolean {
    return this.listeners.length > 0;
  }

  emit(event: OncelyEvent): void {
    for (const listener of this.listeners) {
      try {
        const returned: unknown = listener(event);
        // An async listener's rejection would otherwise surface as an unhandled rejection.
        if (returned instanceof Promise) returned.catch(ignore);
      } catch {
        // Observability must never change the outcome of a call.
      }
    }
  }
}

function ignore(): void {}
