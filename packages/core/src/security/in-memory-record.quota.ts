import { systemClock, type Clock } from '../time/clock.js';
import type { QuotaDecision, RecordQuota } from './record-quota.port.js';

/** Fixed-window record counters in this process's memory (one process only). */
export class InMemoryRecordQuota implements RecordQuota {
  readonly #counts = new Map<string, { window: number; count: number }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async take(scope: string, limit: number, windowMs: number): Promise<QuotaDecision> {
    const now = this.clock.now();
    const window = Math.floor(now / windowMs) * windowMs;
    const entry = this.#counts.get(scope);
    const count = entry?.window === window ? entry.count : 0;
    if (count >= limit) return { kind: 'exceeded', retryAfterMs: window + windowMs - now };
    this.#counts.set(scope, { window, count: count + 1 });
    return { kind: 'taken', window };
  }

  async giveBack(scope: string, window: number): Promise<void> {
    const entry = this.#counts.get(scope);
    if (entry?.window === window && entry.count > 0) entry.count -= 1;
  }
}
