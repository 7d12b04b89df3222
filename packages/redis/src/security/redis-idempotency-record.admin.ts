import type { Cluster, Redis } from 'ioredis';
import type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  IdempotencyRecordListing,
  RecordInspection,
  RecordSummary,
  StoredResponse,
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
 * reach the stores' near caches. It reads records of the previous layout whatever
 * `legacyRecords` says.
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
    const [now, layout, pttl, ...rest] = await this.#scripts.inspect(
      this.#keys.of(identity),
      this.#keys.legacyOf(keyHash),
    );
    const nowMs = Number(String(now));
    const kind = String(layout);
    if (kind === 'value') {
      const record = decodeRecordValue(rest[0] as Buffer);
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
    if (kind !== 'hash') return { kind: 'absent', keyHash };
    return inspectLegacy(keyHash, nowMs, Number(pttl), rest as Buffer[]);
  }

  async forceRelease(identity: string): Promise<ForceReleaseOutcome> {
    const [kind, fence] = await this.#scripts.forceRelease(
      this.#keys.of(identity),
      this.#keys.legacyOf(recordKeyHash(identity)),
    );
    if (kind === 'released') {
      await this.#notify(identity);
      return { kind, fence: Number(fence) };
    }
    return kind === 'completed' ? { kind } : { kind: 'absent' };
  }

  /**
   * Live records of `operation` (`ns:op:ver`, or `ns:op` for all versions), in no particular
   * order: a `SCAN … MATCH recordKeyPattern(…)` of every master of a cluster (never `KEYS`),
   * `batchSize` (default 100) keys per step. Records of the previous layout do not carry their
   * operation and are not listed; `inspect` still finds them by identity.
   */
  listRecords(
    operation: string,
    options: { readonly batchSize?: number } = {},
  ): AsyncIterable<RecordSummary> {
    return scanRecords(this.#client, this.#keys.pattern(operation), options.batchSize ?? 100);
  }

  /**
   * Deletes the record of `identity` whatever its state (the next request runs again; a holder's
   * fenced complete fails), in either layout, and publishes the record notice on which every
   * store drops its near-cached copy; false when there was none.
   */
  async deleteRecord(identity: string): Promise<boolean> {
    const deleted = await this.#client.del(
      this.#keys.of(identity),
      this.#keys.legacyOf(recordKeyHash(identity)),
    );
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

/** A record of the previous layout (a hash), as `inspect` reports it. */
function inspectLegacy(
  keyHash: string,
  nowMs: number,
  pttl: number,
  flat: Buffer[],
): RecordInspection {
  const fields = new Map<string, Buffer>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    fields.set(flat[i]!.toString('latin1'), flat[i + 1]!);
  }
  const text = (name: string) => fields.get(name)?.toString('utf8') ?? '';
  const status = text('status');
  const common = { keyHash, fingerprint: text('digest'), fence: Number(text('fence')) };
  if (status === 'in_progress') {
    const leaseExpiresAt = Number(text('leaseExpiresAt'));
    if (leaseExpiresAt <= nowMs) return { kind: 'absent', keyHash };
    return { kind: 'in_progress', ...common, leaseExpiresAt: new Date(leaseExpiresAt) };
  }
  if (status !== 'completed') return { kind: 'absent', keyHash };
  return {
    kind: 'completed',
    ...common,
    expiresAt: new Date(nowMs + pttl),
    response: decodeStoredResponse({
      status: Number(text('responseStatus')),
      headers: text('responseHeaders'),
      bodyKind: text('bodyKind') as StoredResponse['body']['kind'],
      body: new Uint8Array(fields.get('body') ?? Buffer.alloc(0)),
    }),
  };
}
