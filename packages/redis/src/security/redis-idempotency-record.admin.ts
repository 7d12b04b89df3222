import type { Cluster, Redis } from 'ioredis';
import type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  RecordInspection,
  StoredResponse,
} from '@oncely/core';
import { decodeStoredResponse, recordKeyHash } from '@oncely/core/adapter';
import { recordKeys, type RecordKeys } from '../record/record-key.js';
import type { RedisIdempotencyRecordStoreOptions } from '../record/redis-idempotency-record-store.options.js';
import { defineRecordAdminScripts, type RecordAdminScripts } from './security-scripts.js';

/**
 * Options of `RedisIdempotencyRecordAdmin`: those of the `RedisIdempotencyRecordStore` it
 * administers, whose `keyPrefix` (default `oncely:`) it must share to find the records.
 */
export type RedisIdempotencyRecordAdminOptions = RedisIdempotencyRecordStoreOptions;

/**
 * Operator access to the records of `RedisIdempotencyRecordStore` (use it through `OncelyAdmin`).
 * Reads use Redis' clock, as the store does. The client stays yours.
 */
export class RedisIdempotencyRecordAdmin implements IdempotencyRecordAdmin {
  readonly #scripts: RecordAdminScripts;
  readonly #keys: RecordKeys;

  constructor(client: Redis | Cluster, options: RedisIdempotencyRecordAdminOptions = {}) {
    this.#keys = recordKeys(options.keyPrefix);
    this.#scripts = defineRecordAdminScripts(client);
  }

  async inspect(identity: string): Promise<RecordInspection> {
    const keyHash = recordKeyHash(identity);
    const [now, pttl, ...flat] = await this.#scripts.inspect(this.#keys.of(identity));
    const fields = new Map<string, Buffer>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      fields.set((flat[i] as Buffer).toString('latin1'), flat[i + 1] as Buffer);
    }
    const text = (name: string) => fields.get(name)?.toString('utf8') ?? '';
    const nowMs = Number(String(now));
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
      expiresAt: new Date(nowMs + Number(pttl)),
      response: decodeStoredResponse({
        status: Number(text('responseStatus')),
        headers: text('responseHeaders'),
        bodyKind: text('bodyKind') as StoredResponse['body']['kind'],
        body: new Uint8Array(fields.get('body') ?? Buffer.alloc(0)),
      }),
    };
  }

  async forceRelease(identity: string): Promise<ForceReleaseOutcome> {
    const [kind, fence] = await this.#scripts.forceRelease(this.#keys.of(identity));
    if (kind === 'released') return { kind, fence: Number(fence) };
    return kind === 'completed' ? { kind } : { kind: 'absent' };
  }
}
