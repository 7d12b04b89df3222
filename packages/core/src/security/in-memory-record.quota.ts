import { systemClock, type Clock } from '../time/clock.js';
import type { QuotaDecision, RecordQuota } from './record-quota.port.js';

/**
 * Fixed-window record counters in this process's memory (one process only). A scope holds at
 * most `limit` identities, those of its current window.
 */
export class InMemoryRecordQuota implements RecordQuota {
  readonly #windows = new Map<string, { window: number; identities: Set<string> }>();

  constructor(private readonly clock: Clock = systemClock) {}

  async take(
    scope: string,
    identity: string,
    limit: number,
    windowMs: number,
  ): Promise<QuotaDecision> {
    const now = this.clock.now();
    const window = Math.floor(now / windowMs) * windowMs;
    let entry = this.#windows.get(scope);
    if (entry?.window !== window) {
      entry = { window, identities: new Set() };
      this.#windows.set(scope, entry);
    }
    if (entry.identities.has(identity)) return { kind: 'already_counted' };
    if (entry.identities.size >= limit) {
      return { kind: 'exceeded', retryAfterMs: window + windowMs - now };
    }
    entry.identities.add(identity);
    return { kind: 'counted', window };
  }

  async giveBack(scope: string, identity: string, window: number): Promise<void> {
    const entry = this.#windows.get(scope);
    if (entry?.window === window) entry.identities.delete(identity);
  }
}
