import { InMemoryCapacityError } from '../errors/in-memory-capacity.error.js';
import { InvalidRecordOptionError } from '../record/invalid-record-option.error.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { QuotaDecision, RecordQuota } from './record-quota.port.js';

/** Options of `InMemoryRecordQuota`. */
export interface InMemoryRecordQuotaOptions {
  /**
   * Most identities counted at once, over every scope's current window (default 100 000). A
   * count is never dropped inside its window, since the scope could then exceed its limit: at
   * the bound, counts of past windows are dropped and, if that frees nothing, a new identity is
   * refused with `InMemoryCapacityError` (a 503 with `Retry-After`).
   */
  readonly maxEntries?: number;
}

/** Default of `maxEntries`. */
export const DEFAULT_MAX_QUOTA_ENTRIES = 100_000;

interface ScopeWindow {
  readonly window: number;
  readonly windowMs: number;
  readonly identities: Set<string>;
}

/**
 * Fixed-window record counters in this process's memory (one process only). A scope holds at
 * most `limit` identities, those of its current window; a scope with none holds no entry.
 */
export class InMemoryRecordQuota implements RecordQuota {
  readonly #windows = new Map<string, ScopeWindow>();
  readonly #maxEntries: number;
  /** Identities held over every scope. */
  #counted = 0;

  constructor(
    private readonly clock: Clock = systemClock,
    options: InMemoryRecordQuotaOptions = {},
  ) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_QUOTA_ENTRIES;
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1) {
      throw new InvalidRecordOptionError('maxEntries', this.#maxEntries);
    }
  }

  /** Identities counted, over every scope (those of past windows until they are dropped). */
  get size(): number {
    return this.#counted;
  }

  async take(
    scope: string,
    identity: string,
    limit: number,
    windowMs: number,
  ): Promise<QuotaDecision> {
    const now = this.clock.now();
    const window = Math.floor(now / windowMs) * windowMs;
    let entry = this.#windows.get(scope);
    if (entry !== undefined && entry.window !== window) {
      this.#windows.delete(scope);
      this.#counted -= entry.identities.size;
      entry = undefined;
    }
    if (entry?.identities.has(identity)) return { kind: 'already_counted' };
    if ((entry?.identities.size ?? 0) >= limit) {
      return { kind: 'exceeded', retryAfterMs: window + windowMs - now };
    }
    this.#makeRoom(now);
    if (entry === undefined) {
      entry = { window, windowMs, identities: new Set() };
      this.#windows.set(scope, entry);
    }
    entry.identities.add(identity);
    this.#counted += 1;
    return { kind: 'counted', window };
  }

  async giveBack(scope: string, identity: string, window: number): Promise<void> {
    const entry = this.#windows.get(scope);
    if (entry?.window !== window || !entry.identities.delete(identity)) return;
    this.#counted -= 1;
    if (entry.identities.size === 0) this.#windows.delete(scope);
  }

  /** At the bound, drops the counts of windows that are over, or refuses. */
  #makeRoom(now: number): void {
    if (this.#counted < this.#maxEntries) return;
    let firstWindowEnd = Number.POSITIVE_INFINITY;
    for (const [scope, entry] of this.#windows) {
      const end = entry.window + entry.windowMs;
      if (end <= now) {
        this.#windows.delete(scope);
        this.#counted -= entry.identities.size;
      } else {
        firstWindowEnd = Math.min(firstWindowEnd, end);
      }
    }
    if (this.#counted < this.#maxEntries) return;
    throw new InMemoryCapacityError(
      'InMemoryRecordQuota',
      'maxEntries',
      this.#maxEntries,
      firstWindowEnd - now,
    );
  }
}
