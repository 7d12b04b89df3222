import type { Cluster, Redis } from 'ioredis';
import type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  IdempotencyRecordListing,
  RecordInspection,
  RecordSummary,
} from '@oncely/core';
import { decodeStoredResponse, recordKeyHash } from '@oncely/core/adapter';
import { keyPrefix } from '../connection/key-prefix.js';
import { recordKeys, type RecordKeys } from '../record/record-key.js';
import { recordNoticesChannel } from '../record/record-near-cache.js';
import { decodeRecordValue } from '../record/record-value.js';
import type { RedisIdempotencyRecordStoreOptions } from '../record/redis-idempotency-record-store.options.js';
import { scanRecords } from './record-scan.js';
import { defineRecordAdminScripts, type RecordAdminScripts } from './security-scripts.js';

/**
 * Options of `RedisIdempotencyRecordAdmin`: those of the `RedisIdempotencyRecordStore` it
 * administers, whose `keyPrefix` (default `oncely:`) it must share to find the records and to
 * reach the stores' near caches.
 */
export type RedisIdempotencyRecordAdminOptions = RedisIdempotencyRecordStoreOptions;

/**
 * Operator access to the records of `RedisIdempotencyRecordStore` (use it through `OncelyAdmin`,
 * or the `oncely` CLI). Reads use Redis' clock, as the store does. Every deletion publishes a
 * record notice, on which every store of the key prefix drops its near-cached copy. The client
 * stays yours.
 */
export class RedisIdempotencyRecordAdmin
  implements IdempotencyRecordAdmin, IdempotencyRecordListing
{
  readonly #client: Redis | Cluster;
  readonly #scripts: RecordAdminScripts;
  readonly #keys: RecordKeys;
  readonly #channel: string;

  constructor(client: Redis | Cluster, options: RedisIdempotencyRecordAdminOptions = {}) {
    this.#client = client;
    this.#keys = recordKeys(options.keyPrefix);
    this.#channel = recordNoticesChannel(keyPrefix(options.keyPrefix));
    this.#scripts = defineRecordAdminScripts(client);
  }

  async inspect(identity: string): Promise<RecordInspection> {
    const keyHash = recordKeyHash(identity);
    const [now, pttl, value] = await this.#scripts.inspect(this.#keys.of(identity));
    const nowMs = Number(String(now));
    const record = value === undefined ? undefined : decodeRecordValue(value);
    if (record === undefined) return { kind: 'absent', keyHash };
    const common = {
      keyHash,
      fingerprint: record.digest,
      ...(record.service !== '' && { owner: record.service }),
      fence: record.fence,
    };
    if (record.kind === 'in_progress') {
      if (record.leaseEnd <= nowMs) return { kind: 'absent', keyHash };
      return { kind: 'in_progress', ...common, leaseExpiresAt: new Date(record.leaseEnd) };
    }
    return {
      kind: 'completed',
      ...common,
      expiresAt: new Date(nowMs + Number(pttl)),
      response: decodeStoredResponse(record.response!),
    };
  }

  async forceRelease(identity: string): Promise<ForceReleaseOutcome> {
    const [kind, fence] = await this.#scripts.forceRelease(this.#keys.of(identity));
    if (kind === 'released') {
      await this.#notify(identity);
      return { kind, fence: Number(fence) };
    }
    return kind === 'completed' ? { kind } : { kind: 'absent' };
  }

  /**
   * Live records of `operation` (`ns:op:ver`, or `ns:op` for all versions), in no particular
   * order: a `SCAN … MATCH recordKeyPattern(…)` of every master of a cluster (never `KEYS`),
   * `batchSize` (default 100) keys per step.
   */
  listRecords(
    operation: string,
    options: { readonly batchSize?: number } = {},
  ): AsyncIterable<RecordSummary> {
    return scanRecords(this.#client, this.#keys.pattern(operation), options.batchSize ?? 100);
  }

  /**
   * Deletes the record of `identity` whatever its state (the next request runs again; a holder's
   * fenced complete fails), and publishes the record notice on which every
   * store drops its near-cached copy; false when there was none.
   */
  async deleteRecord(identity: string): Promise<boolean> {
    const deleted = await this.#client.del(this.#keys.of(identity));
    // Published even when nothing was deleted: it costs nothing and settles any doubt.
    await this.#notify(identity);
    return deleted > 0;
  }

  /**
   * Tells every store of the key prefix to drop all its near-cached records, as after a bulk
   * deletion done outside this admin (a `DEL` by hand, a restore from a backup).
   */
  async flushNearCaches(): Promise<void> {
    await this.#client.publish(this.#channel, '');
  }

  async #notify(identity: string): Promise<void> {
    await this.#client.publish(this.#channel, identity);
  }
}
