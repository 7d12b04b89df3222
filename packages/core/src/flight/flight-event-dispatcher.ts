import type { OncelyEvent, OncelyEventListener } from '../events/oncely-event.js';

/** Delivers events to listeners, isolating the flight from any listener that throws. */
export class FlightEventDispatcher {
  constructor(private readonly listeners: readonly OncelyEventListener[]) {}

  emit(event: OncelyEvent): void {
    for (const listener of this.listeners) {
      try {
        const returned: unknown = listener(event);
        // An async listener's rejection would otherwise surface as an unhandled rejection.
        if (returned instanceof Promise) returned.catch(ignore);
      } catch {
        // Observability must never change the outcome of a flight.
      }
    }
  }
}

function ignore(): void {}
