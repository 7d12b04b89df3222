import { systemClock, type Clock } from '../time/clock.js';
import type {
  AcquireOutcome,
  FlightCoordinator,
  FlightOutcome,
} from './flight-coordinator.port.js';
import type { FlightLeaseAdmin } from './flight-lease-admin.port.js';
import type {
  FlightEntry,
  FlightInspection,
  FlightInspectionAdmin,
} from './flight-inspection-admin.port.js';
import { InMemoryCapacityError } from '../errors/in-memory-capacity.error.js';
import { InvalidFlightOptionError } from './invalid-flight-option.error.js';

/** Options of `InMemoryFlightCoordinator`. */
export interface InMemoryFlightCoordinatorOptions {
  /** Time source for every TTL; inject a manual clock to test expiry without waiting. */
  readonly clock?: Clock;
  /**
   * How often expired entries of keys nobody touches again are dropped (ms; real time). Entries
   * a call touches are dropped at once when expired. 0 disables the timer.
   */
  readonly sweepInterval?: number;
  /**
   * Most keys held (default 50 000; a key with a small result takes 300 to 500 bytes, so some
   * 15 to 25 MB at the bound). Cached outcomes are a cache: at the bound the least recently used one is
   * dropped (or an expired lease) to make room. A live lease never is, since a second leader
   * would run the work again: when every key held is one, `acquire` of a new key is refused with
   * `InMemoryCapacityError` (a 503 with `Retry-After`).
   */
  readonly maxEntries?: number;
}

/** Default of `maxEntries`. */
export const DEFAULT_MAX_FLIGHT_ENTRIES = 50_000;

interface KeyState {
  lease?: { readonly owner: string; readonly fence: number; expiresAt: number };
  stored?: { readonly outcome: FlightOutcome; readonly expiresAt: number };
}

type NoticeListener = () => void;

/**
 * `FlightCoordinator` for a single process: the embedded default, and the reference the
 * contract suite is written against.
 *
 * Fencing tokens come from one counter shared by every key, so they keep growing per key even
 * after a key's state has expired and been dropped. Expired leases and outcomes are dropped as
 * calls touch them and by a periodic sweep (an unref'd timer), so memory follows live keys only.
 * Notices are delivered in-process; a `waitForNotice` registers synchronously, so it catches
 * every notice published after the call.
 */
export class InMemoryFlightCoordinator
  implements FlightCoordinator, FlightLeaseAdmin, FlightInspectionAdmin
{
  readonly #clock: Clock;
  /** Least recently used first: a cached outcome read or stored moves to the end. */
  readonly #states = new Map<string, KeyState>();
  readonly #maxEntries: number;
  /**
   * Where `#makeRoom` goes on from, oldest first: a Map iterator survives deletions, so every
   * key dropped is passed over once instead of at each later look from the start.
   */
  #cursor: MapIterator<[string, KeyState]>;
  readonly #listeners = new Map<string, Set<NoticeListener>>();
  readonly #sweeper: NodeJS.Timeout | undefined;
  #fence = 0;

  constructor(options: InMemoryFlightCoordinatorOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    const sweepInterval = options.sweepInterval ?? 1_000;
    assertMilliseconds('sweepInterval', sweepInterval, 0);
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_FLIGHT_ENTRIES;
    this.#cursor = this.#states.entries();
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1) {
      throw new InvalidFlightOptionError(
        'maxEntries',
        this.#maxEntries,
        'a positive integer',
        'InMemoryFlightCoordinator',
      );
    }
    if (sweepInterval > 0) {
      this.#sweeper = setInterval(() => this.sweep(), sweepInterval);
      this.#sweeper.unref();
    }
  }

  /** Keys holding a live lease or stored outcome (expired ones count until dropped). */
  get size(): number {
    return this.#states.size;
  }

  /** Keys with at least one `waitForNotice` pending. */
  get waitingKeys(): number {
    return this.#listeners.size;
  }

  async acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    assertMilliseconds('leaseTtlMs', leaseTtlMs, 1);
    const now = this.#clock.now();
    const state = this.#live(key, now);
    if (state?.stored) {
      this.#use(key, state);
      const { outcome } = state.stored;
      return outcome.kind === 'result'
        ? { kind: 'cached', payload: outcome.payload }
        : { kind: 'failed', payload: outcome.payload };
    }
    if (state?.lease) {
      return {
        kind: 'busy',
        leaseRemainingMs: state.lease.expiresAt - now,
        holder: state.lease.owner,
      };
    }
    this.#makeRoom(now);
    this.#fence += 1;
    this.#states.set(key, { lease: { owner, fence: this.#fence, expiresAt: now + leaseTtlMs } });
    return { kind: 'leader', fence: this.#fence };
  }

  async renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean> {
    assertMilliseconds('leaseTtlMs', leaseTtlMs, 1);
    const now = this.#clock.now();
    const lease = this.#live(key, now)?.lease;
    if (lease?.owner !== owner) return false;
    lease.expiresAt = now + leaseTtlMs;
    return true;
  }

  async complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean> {
    assertMilliseconds('outcome.ttlMs', outcome.ttlMs, 0);
    const now = this.#clock.now();
    if (this.#live(key, now)?.lease?.owner !== owner) return false;
    this.#states.delete(key);
    if (outcome.ttlMs > 0) {
      this.#states.set(key, { stored: { outcome, expiresAt: now + outcome.ttlMs } });
    }
    this.#notify(key);
    return true;
  }

  async release(key: string, owner: string): Promise<boolean> {
    if (this.#live(key, this.#clock.now())?.lease?.owner !== owner) return false;
    this.#states.delete(key);
    this.#notify(key);
    return true;
  }

  async forceReleaseLease(key: string): Promise<boolean> {
    const state = this.#live(key, this.#clock.now());
    if (!state?.lease) return false;
    delete state.lease;
    if (!state.stored) this.#states.delete(key);
    this.#notify(key);
    return true;
  }

  async inspectFlight(key: string): Promise<FlightInspection> {
    const now = this.#clock.now();
    return inspectionOf(this.#live(key, now), now);
  }

  async *listFlights(
    operation: string,
    // The whole map is in memory: there is nothing to batch.
    _options?: { readonly batchSize?: number },
  ): AsyncIterable<FlightEntry> {
    const now = this.#clock.now();
    const prefix = `${operation}:`;
    for (const key of [...this.#states.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const inspection = inspectionOf(this.#live(key, now), now);
      if (inspection.kind !== 'absent') yield { key, inspection };
    }
  }

  async evictResult(key: string): Promise<boolean> {
    const state = this.#live(key, this.#clock.now());
    if (!state?.stored) return false;
    delete state.stored;
    if (!state.lease) this.#states.delete(key);
    return true;
  }

  waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const listeners = this.#listeners.get(key) ?? new Set<NoticeListener>();
      this.#listeners.set(key, listeners);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        listeners.delete(done);
        if (listeners.size === 0 && this.#listeners.get(key) === listeners) {
          this.#listeners.delete(key);
        }
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      listeners.add(done);
    });
  }

  /** Drops every expired lease and outcome now. */
  sweep(): void {
    const now = this.#clock.now();
    for (const key of this.#states.keys()) this.#live(key, now);
  }

  /** What the start-up log calls it. */
  describe(): string {
    return 'in-memory (this process only)';
  }

  /** Stops the sweep timer and wakes every pending `waitForNotice`; state stays readable. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    for (const key of [...this.#listeners.keys()]) this.#notify(key);
  }

  /** The key's state without its expired parts; dropped entirely once nothing is left. */
  #live(key: string, now: number): KeyState | undefined {
    const state = this.#states.get(key);
    if (state === undefined) return undefined;
    if (state.lease && state.lease.expiresAt <= now) delete state.lease;
    if (state.stored && state.stored.expiresAt <= now) delete state.stored;
    if (state.lease || state.stored) return state;
    this.#states.delete(key);
    return undefined;
  }

  /** Marks `key` most recently used. */
  #use(key: string, state: KeyState): void {
    this.#states.delete(key);
    this.#states.set(key, state);
  }

  /**
   * Makes room for one more key at the bound: drops the least recently used key that is not a
   * live lease, or refuses.
   */
  #makeRoom(now: number): void {
    if (this.#states.size < this.#maxEntries) return;
    let firstLeaseEnd = Number.POSITIVE_INFINITY;
    for (let looked = 0; looked < this.#states.size; looked++) {
      let next = this.#cursor.next();
      if (next.done) {
        this.#cursor = this.#states.entries();
        next = this.#cursor.next();
      }
      const [key, state] = next.value as [string, KeyState];
      if (state.lease && state.lease.expiresAt > now) {
        firstLeaseEnd = Math.min(firstLeaseEnd, state.lease.expiresAt);
        continue;
      }
      this.#states.delete(key);
      return;
    }
    throw new InMemoryCapacityError(
      'InMemoryFlightCoordinator',
      'maxEntries',
      this.#maxEntries,
      firstLeaseEnd - now,
    );
  }

  #notify(key: string): void {
    const listeners = this.#listeners.get(key);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) listener();
  }
}

function inspectionOf(state: KeyState | undefined, now: number): FlightInspection {
  if (state?.lease) {
    const { owner: holder, fence, expiresAt } = state.lease;
    return { kind: 'leading', holder, fence, leaseRemainingMs: expiresAt - now };
  }
  if (!state?.stored) return { kind: 'absent' };
  const { outcome, expiresAt } = state.stored;
  const remainingMs = expiresAt - now;
  return outcome.kind === 'result'
    ? { kind: 'cached', remainingMs, bytes: Buffer.byteLength(outcome.payload) }
    : { kind: 'failed', remainingMs };
}

function assertMilliseconds(name: string, value: number, min: 0 | 1): void {
  if (!Number.isSafeInteger(value) || value < min) {
    const expected = min === 0 ? 'a non-negative' : 'a positive';
    throw new InvalidFlightOptionError(
      name,
      value,
      `${expected} integer number of milliseconds`,
      'InMemoryFlightCoordinator',
    );
  }
}
