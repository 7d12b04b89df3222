import type { Cluster, Redis } from 'ioredis';
import type { QuotaDecision, RecordQuota } from '@oncely/core';
import { keyPrefix } from '../connection/key-prefix.js';
import { defineQuotaScripts, type QuotaScripts } from './security-scripts.js';

/** Options of `RedisRecordQuota`. */
export interface RedisRecordQuotaOptions {
  /** Prefix of the counter keys; default `oncely:`. */
  readonly keyPrefix?: string;
}

/**
 * Fixed-window record counters shared by every process, one Redis key per scope and window
 * (`<prefix>quota:{<scope>}:<window start>`), each step one atomic script. Windows follow the
 * callers' clocks: processes whose clocks differ by `d` may briefly count in neighbouring
 * windows, which lets through at most one extra window's worth during `d`. The client stays yours.
 */
export class RedisRecordQuota implements RecordQuota {
  readonly #scripts: QuotaScripts;
  /** `<prefix>quota:`, what every counter key starts with. */
  readonly #counterKeyStart: string;

  constructor(client: Redis | Cluster, options: RedisRecordQuotaOptions = {}) {
    this.#counterKeyStart = `${keyPrefix(options.keyPrefix)}quota:`;
    this.#scripts = defineQuotaScripts(client);
  }

  async take(scope: string, limit: number, windowMs: number): Promise<QuotaDecision> {
    const now = Date.now();
    const window = Math.floor(now / windowMs) * windowMs;
    const taken = await this.#scripts.take(this.counterKey(scope, window), limit, windowMs * 2);
    return taken === 1
      ? { kind: 'taken', window }
      : { kind: 'exceeded', retryAfterMs: window + windowMs - now };
  }

  async giveBack(scope: string, window: number): Promise<void> {
    await this.#scripts.giveBack(this.counterKey(scope, window));
  }

  /** The counter of `scope` in the window starting at `window` (exposed for operators). */
  counterKey(scope: string, window: number): string {
    // Braces in a scope would end the hash tag early; they never occur in escaped key segments.
    return `${this.#counterKeyStart}{${scope.replace(/[{}]/g, '_')}}:${window}`;
  }
}
