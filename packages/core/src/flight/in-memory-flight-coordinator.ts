import { systemClock, type Clock } from '../time/clock.js';
import type {
  AcquireOutcome,
  FlightCoordinator,
  FlightOutcome,
  HeldOutcome,
} from './flight-coordinator.port.js';
import type { FlightLeaseAdmin } from './flight-lease-admin.port.js';
import type {
  FlightEntry,
  FlightInspection,
  FlightInspectionAdmin,
} from './flight-inspection-admin.port.js';
import { InMemoryCapacityError } from '../errors/in-memory-capacity.error.js';
import { InvalidFlightOptionError } from './invalid-flight-option.error.js';
import { ENTRY_OVERHEAD_BYTES, textBytes } from '../memory/held-bytes.js';

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
  /**
   * Most bytes held over all keys (default 256 MiB): two per character of each key, lease owner
   * and cached payload, and 256 per key for its objects. The same rule as `maxEntries`: to make
   * room the least recently used cached outcomes (and expired leases) go first, never a live
   * lease; when only live leases are left, `acquire` of a new key is refused with
   * `InMemoryCapacityError`, and an outcome that does not fit even then is not cached (its
   * leader's callers still get it; a later call runs the work again).
   */
  readonly maxBytes?: number;
}

/** Default of `maxEntries`. */
export const DEFAULT_MAX_FLIGHT_ENTRIES = 50_000;

/**
 * Default of `maxBytes`: 256 MiB. Room for 50 000 results of some 2.5 KB, or 250 of the
 * largest a route stores by default (`maxResultBytes`, 1 MiB); a small share of a server's heap.
 */
export const DEFAULT_MAX_FLIGHT_BYTES = 256 * 1024 * 1024;

interface KeyState {
  lease?: { readonly owner: string; readonly fence: number; expiresAt: number };
  stored?: {
    readonly outcome: FlightOutcome;
    readonly expiresAt: number;
    /** `outcome` as `acquire` and `peek` return it, made once. */
    readonly held: HeldOutcome;
  };
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
  readonly #maxBytes: number;
  /** Bytes of every key held (see `maxBytes`), expired parts included until dropped. */
  #heldBytes = 0;
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
    this.#maxEntries = positiveInteger(
      'maxEntries',
      options.maxEntries,
      DEFAULT_MAX_FLIGHT_ENTRIES,
    );
    this.#maxBytes = positiveInteger('maxBytes', options.maxBytes, DEFAULT_MAX_FLIGHT_BYTES);
    this.#cursor = this.#states.entries();
    if (sweepInterval > 0) {
      this.#sweeper = setInterval(() => this.sweep(), sweepInterval);
      this.#sweeper.unref();
    }
  }

  /** Keys holding a live lease or stored outcome (expired ones count until dropped). */
  get size(): number {
    return this.#states.size;
  }

  /** Bytes of the keys held as `maxBytes` counts them (expired parts until dropped). */
  get bytes(): number {
    return this.#heldBytes;
  }

  /** Keys with at least one `waitForNotice` pending. */
  get waitingKeys(): number {
    return this.#listeners.size;
  }

  async acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    assertMilliseconds('leaseTtlMs', leaseTtlMs, 1);
    const now = this.#clock.now();
    const state = this.#live(key, now);
    if (state?.stored) return this.#held(key, state, state.stored.held);
    if (state?.lease) {
      return {
        kind: 'busy',
        leaseRemainingMs: state.lease.expiresAt - now,
        holder: state.lease.owner,
      };
    }
    const lease = { owner, fence: this.#fence + 1, expiresAt: now + leaseTtlMs };
    const refused = this.#makeRoom(now, bytesOf(key, { lease }), true);
    if (refused) throw refused;
    this.#fence = lease.fence;
    this.#set(key, { lease });
    return { kind: 'leader', fence: this.#fence };
  }

  peek(key: string): HeldOutcome | undefined {
    const state = this.#live(key, this.#clock.now());
    return state?.stored ? this.#held(key, state, state.stored.held) : undefined;
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
    this.#delete(key);
    const held: HeldOutcome = {
      kind: outcome.kind === 'result' ? 'cached' : 'failed',
      payload: outcome.payload,
    };
    const state = { stored: { outcome, expiresAt: now + outcome.ttlMs, held } };
    // An outcome with no room left even after making some is not cached, as with a TTL of 0.
    if (outcome.ttlMs > 0 && !this.#makeRoom(now, bytesOf(key, state), false)) {
      this.#set(key, state);
    }
    this.#notify(key);
    return true;
  }

  async release(key: string, owner: string): Promise<boolean> {
    if (this.#live(key, this.#clock.now())?.lease?.owner !== owner) return false;
    this.#delete(key);
    this.#notify(key);
    return true;
  }

  async forceReleaseLease(key: string): Promise<boolean> {
    const state = this.#live(key, this.#clock.now());
    if (!state?.lease) return false;
    this.#trim(key, state, 'lease');
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
    this.#trim(key, state, 'stored');
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
    if (state.lease && state.lease.expiresAt <= now) this.#trim(key, state, 'lease');
    if (state.stored && state.stored.expiresAt <= now) this.#trim(key, state, 'stored');
    return state.lease || state.stored ? state : undefined;
  }

  #set(key: string, state: KeyState): void {
    this.#delete(key);
    this.#states.set(key, state);
    this.#heldBytes += bytesOf(key, state);
  }

  #delete(key: string): void {
    const state = this.#states.get(key);
    if (state === undefined) return;
    this.#states.delete(key);
    this.#heldBytes -= bytesOf(key, state);
  }

  /** Drops one part of the key's state, and the key once nothing is left. */
  #trim(key: string, state: KeyState, part: 'lease' | 'stored'): void {
    this.#heldBytes -= bytesOf(key, state);
    delete state[part];
    if (state.lease || state.stored) this.#heldBytes += bytesOf(key, state);
    else this.#states.delete(key);
  }

  /** A stored outcome read: it becomes the most recently used. */
  #held(key: string, state: KeyState, held: HeldOutcome): HeldOutcome {
    this.#use(key, state);
    return held;
  }

  /** Marks `key` most recently used. */
  #use(key: string, state: KeyState): void {
    this.#states.delete(key);
    this.#states.set(key, state);
  }

  /**
   * Makes room for `bytes` more (and, for a `newKey`, one more key) by dropping the least
   * recently used keys that are not a live lease; the refusal when only live leases are left.
   */
  #makeRoom(now: number, bytes: number, newKey: boolean): InMemoryCapacityError | undefined {
    let firstLeaseEnd = Number.POSITIVE_INFINITY;
    // Leases passed over since the last key dropped: all of them once it reaches the size.
    let passed = 0;
    for (;;) {
      const countFull = newKey && this.#states.size >= this.#maxEntries;
      if (!countFull && this.#heldBytes + bytes <= this.#maxBytes) return undefined;
      // More than the whole bound can never fit: drop nothing for it.
      if (passed >= this.#states.size || bytes > this.#maxBytes) {
        return new InMemoryCapacityError(
          'InMemoryFlightCoordinator',
          countFull ? 'maxEntries' : 'maxBytes',
          countFull ? this.#maxEntries : this.#maxBytes,
          Number.isFinite(firstLeaseEnd) ? firstLeaseEnd - now : 0,
          countFull ? 'entries' : 'bytes',
        );
      }
      let next = this.#cursor.next();
      if (next.done) {
        this.#cursor = this.#states.entries();
        next = this.#cursor.next();
      }
      const [key, state] = next.value as [string, KeyState];
      if (state.lease && state.lease.expiresAt > now) {
        firstLeaseEnd = Math.min(firstLeaseEnd, state.lease.expiresAt);
        passed += 1;
        continue;
      }
      this.#delete(key);
      passed = 0;
    }
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

/** Bytes of a key's state as `maxBytes` counts them. */
function bytesOf(key: string, state: KeyState): number {
  return (
    ENTRY_OVERHEAD_BYTES +
    textBytes(key) +
    (state.lease ? textBytes(state.lease.owner) : 0) +
    (state.stored ? textBytes(state.stored.outcome.payload) : 0)
  );
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < 1) {
    throw new InvalidFlightOptionError(
      name,
      chosen,
      'a positive integer',
      'InMemoryFlightCoordinator',
    );
  }
  return chosen;
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
