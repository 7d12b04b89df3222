import {
  flightBusy,
  joinWithin,
  stillLeads,
  type JoinOutcome,
  type Landing,
  type Leadership,
  type LocalFlight,
} from './local-flight.js';
import type { ResolvedFlightOptions } from './single-flight-options.js';

const FREED: JoinOutcome = { freed: true };

/**
 * The flights running in this process, by key: what a caller joins instead of asking the
 * coordinator, as long as the flight still stands for its key.
 */
export class LocalFlights {
  readonly #flights = new Map<string, LocalFlight>();

  get size(): number {
    return this.#flights.size;
  }

  get(key: string): LocalFlight | undefined {
    return this.#flights.get(key);
  }

  /**
   * Whether this process's flight on `key`, if it leads one, still holds its lease, asked of the
   * coordinator now: `false` once an operator freed it under the running work.
   */
  holdsLease(key: string): Promise<boolean> {
    const running = this.#flights.get(key);
    return running === undefined ? Promise.resolve(true) : stillLeads(running);
  }

  /** Registers a flight until it lands. */
  track(
    key: string,
    landing: Promise<Landing<unknown>>,
    settings: ResolvedFlightOptions,
    leadership: Leadership,
  ): void {
    const flight: LocalFlight = {
      landing,
      failurePolicy: settings.failurePolicy,
      leaseTtl: settings.leaseTtl,
      since: performance.now(),
      leadership,
    };
    this.#flights.set(key, flight);
    // Registered before any caller awaits the flight, so the key is gone before they resume.
    const forget = () => this.forget(key, flight);
    landing.then(forget, forget);
  }

  /** Drops `flight` from `key`, unless another flight has taken its place. */
  forget(key: string, flight: LocalFlight): void {
    if (this.#flights.get(key) === flight) this.#flights.delete(key);
  }

  /**
   * Waits for a flight of this process as its follower, unless its lease turns out lost under
   * its running work (an operator's force-release, an expiry): then `{ freed }`, and the caller
   * goes to the coordinator as a new one. A caller that would be refused in favour of that work
   * asks the coordinator now; waiting callers hear it from the flight's watchdog, at its next
   * renewal at the latest, at no cost.
   */
  async join(
    running: LocalFlight,
    key: string,
    settings: ResolvedFlightOptions,
    deadline: number,
    /** The caller refuses duplicates of running work itself (`letRejectingCallersJoin`). */
    rejectingJoins: boolean,
  ): Promise<JoinOutcome> {
    if (settings.onBusy === 'reject' && rejectingJoins) {
      return (await stillLeads(running)) ? joinWithin(running, key, settings, deadline) : FREED;
    }
    if (settings.onBusy === 'reject') {
      // Refused at once while the flight runs the work or waits for another node's run, as a
      // caller on another node would be; a lease freed under the work no longer stands for it.
      // A flight still asking the coordinator is neither yet: its answer tells which.
      const settled = running.landing.then(
        () => undefined,
        () => undefined,
      );
      await Promise.race([running.leadership.answered, settled]);
      const { lease, heldElsewhereUntil } = running.leadership;
      if (lease !== undefined && !(await lease.confirm())) return FREED;
      if (lease !== undefined || heldElsewhereUntil !== undefined) throw flightBusy(running, key);
      return joinWithin(running, key, settings, deadline);
    }
    return Promise.race([joinWithin(running, key, settings, deadline), running.leadership.lost]);
  }
}
