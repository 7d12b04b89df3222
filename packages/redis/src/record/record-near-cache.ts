import type { Cluster, Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { BeginOptions } from '@oncely/core';
import {
  ENTRY_OVERHEAD_BYTES,
  encodedResponseBytes,
  foreignOwnerOf,
  textBytes,
  type EncodedResponse,
} from '@oncely/core/adapter';
import type { RedisNearCacheOptions } from '../connection/near-cache-bounds.js';

/** A completed record as the near cache keeps it. */
export interface NearRecord {
  readonly digest: string;
  /** The claiming service; '' for none. */
  readonly service: string;
  readonly response: EncodedResponse;
  /** Local clock (ms): no later than the moment Redis drops the record. */
  readonly expiresAt: number;
}

/** What `RedisIdempotencyRecordStore.nearCacheStats` reports. */
export interface NearCacheStats {
  /** Completed records held. */
  readonly entries: number;
  /** Their bytes, as `nearCache.maxBytes` counts them. */
  readonly bytes: number;
  /** Whether they are served: the notice subscription is confirmed. */
  readonly listening: boolean;
}

/**
 * The record notices channel of a key prefix. A message is the identity whose record an operator
 * deleted, or '' when every near-cached record must go (a bulk purge).
 */
export function recordNoticesChannel(prefix: string): string {
  return `${prefix}record-notices`;
}

/**
 * Completed records this process has seen, by identity, so that a replay costs no round trip. A
 * completed record never changes until its key expires or an operator deletes it, so an entry is
 * served only until its known expiry and only while the notice subscription is confirmed: every
 * deletion notice drops its entry, and since notices published while not subscribed are lost,
 * every (re)subscription and every disconnect flush everything.
 *
 * A read from Redis races a notice on the other connection: the reply of a read sent before a
 * deletion may arrive after the notice. So `remember` takes the notice count read before the
 * command was sent (`mark`) and keeps nothing if any notice or flush came in between.
 */
export class RecordNearCache {
  readonly #entries: LRUCache<string, NearRecord>;
  readonly #subscriber: Redis | Cluster;
  #listening = false;
  #closed = false;
  /** Notices, flushes and disconnects seen: a remembered read must not predate any. */
  #epoch = 0;

  /**
   * @param createSubscriber opens the store's own subscriber connection (closed by `close`).
   */
  constructor(
    bounds: Required<RedisNearCacheOptions>,
    channel: string,
    createSubscriber: () => Redis | Cluster,
  ) {
    // A record larger than maxBytes alone is not kept (lru-cache refuses it). Its size comes
    // from lengths already known: the body's bytes as stored, and the texts'.
    this.#entries = new LRUCache({
      max: bounds.maxEntries,
      maxSize: bounds.maxBytes,
      sizeCalculation: (record, identity) =>
        ENTRY_OVERHEAD_BYTES +
        textBytes(identity) +
        textBytes(record.digest) +
        textBytes(record.service) +
        encodedResponseBytes(record.response),
    });
    const subscriber = (this.#subscriber = createSubscriber());
    // Connection errors are expected while Redis is down; ioredis keeps reconnecting.
    subscriber.on('error', () => undefined);
    subscriber.on('ready', () => {
      subscriber.subscribe(channel).then(
        () => {
          if (this.#closed) return;
          this.flush();
          this.#listening = true;
        },
        // Cut off by a disconnect: the next 'ready' subscribes again.
        () => undefined,
      );
    });
    for (const event of ['close', 'reconnecting', 'end', '-node', 'node error']) {
      subscriber.on(event, () => this.stopListening());
    }
    subscriber.on('message', (from: string, identity: string) => {
      if (from !== channel) return;
      this.#epoch += 1;
      if (identity === '') this.#entries.clear();
      else this.#entries.delete(identity);
    });
  }

  /** What `remember` needs to know that no notice came in meanwhile; read before sending. */
  mark(): number {
    return this.#epoch;
  }

  /** Keeps a completed record read or written by a command sent at `mark`. */
  remember(identity: string, record: NearRecord, mark: number): void {
    if (!this.#listening || mark !== this.#epoch || record.expiresAt <= Date.now()) return;
    this.#entries.set(identity, record);
  }

  /**
   * The response of `identity`'s record when the cache holds it live, for the same digest and an
   * owner `options` accepts; `undefined` sends the caller to Redis (which answers the mismatch,
   * the foreign owner or the absence).
   */
  answer(
    identity: string,
    digest: string,
    options: Pick<BeginOptions, 'owner' | 'ownerAliases' | 'shared'>,
  ): EncodedResponse | undefined {
    if (!this.#listening) return undefined;
    const record = this.#entries.get(identity);
    if (record === undefined) return undefined;
    if (record.expiresAt <= Date.now()) {
      this.#entries.delete(identity);
      return undefined;
    }
    if (record.digest !== digest || foreignOwnerOf(record.service, options) !== undefined) {
      return undefined;
    }
    return record.response;
  }

  /** Entries held, and whether they are served (the subscription is confirmed). */
  stats(): NearCacheStats {
    return {
      entries: this.#entries.size,
      bytes: this.#entries.calculatedSize,
      listening: this.#listening,
    };
  }

  close(): void {
    this.#closed = true;
    this.stopListening();
    this.#subscriber.disconnect();
  }

  private stopListening(): void {
    this.#listening = false;
    this.flush();
  }

  private flush(): void {
    this.#epoch += 1;
    this.#entries.clear();
  }
}
