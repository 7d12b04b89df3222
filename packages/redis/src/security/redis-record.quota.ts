import type { Cluster, Redis } from 'ioredis';
import type { QuotaDecision, RecordQuota } from '@oncely/core';
import { recordKeyHash } from '@oncely/core/adapter';
import { keyPrefix } from '../connection/key-prefix.js';
import { defineQuotaScripts, type QuotaScripts } from './security-scripts.js';

/** Options of `RedisRecordQuota`. */
export interface RedisRecordQuotaOptions {
  /** Prefix of the quota keys; default `oncely:`. */
  readonly keyPrefix?: string;
}

/**
 * Fixed-window record counters shared by every process: per scope and window one Redis set of
 * the identities counted (`<prefix>quota:{<scope>}:<window start>:ids`, members are record key
 * hashes, at most `limit` of them), each step one atomic script, so an identity counts once per
 * window. Windows follow the callers' clocks: processes whose clocks differ by `d` may briefly
 * count in neighbouring windows, which lets through at most one extra window's worth during `d`.
 * The client stays yours.
 */
export class RedisRecordQuota implements RecordQuota {
  readonly #scripts: QuotaScripts;
  /** `<prefix>quota:`, what every quota key starts with. */
  readonly #quotaKeyStart: string;

  constructor(client: Redis | Cluster, options: RedisRecordQuotaOptions = {}) {
    this.#quotaKeyStart = `${keyPrefix(options.keyPrefix)}quota:`;
    this.#scripts = defineQuotaScripts(client);
  }

  async take(
    scope: string,
    identity: string,
    limit: number,
    windowMs: number,
  ): Promise<QuotaDecision> {
    const now = Date.now();
    const window = Math.floor(now / windowMs) * windowMs;
    const taken = await this.#scripts.take(
      this.countedKey(scope, window),
      recordKeyHash(identity),
      limit,
      windowMs * 2,
    );
    if (taken === 1) return { kind: 'counted', window };
    if (taken === 2) return { kind: 'already_counted' };
    return { kind: 'exceeded', retryAfterMs: window + windowMs - now };
  }

  async giveBack(scope: string, identity: string, window: number): Promise<void> {
    await this.#scripts.giveBack(this.countedKey(scope, window), recordKeyHash(identity));
  }

  /**
   * The set of identities `scope` counted in the window starting at `window` (exposed for
   * operators: `SCARD` is the count).
   */
  countedKey(scope: string, window: number): string {
    // Braces in a scope would end the hash tag early; they never occur in escaped key segments.
    return `${this.#quotaKeyStart}{${scope.replace(/[{}]/g, '_')}}:${window}:ids`;
  }
}
