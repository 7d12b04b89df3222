/**
 * Completed flight outcomes this process has seen, served without a round trip until their Redis
 * key expires. A cached outcome never changes while it lives (a new one can only be stored once
 * it is gone), so the only ways a near-cached copy goes stale are its expiry, which each entry
 * carries, and an operator's eviction, which publishes a notice that drops it here.
 *
 * Guarantees, and how:
 * - Never served past its Redis key: an entry expires at the `performance.now()` taken *before*
 *   the command that saw it was sent, plus the TTL (or PTTL) Redis applied or reported, so local
 *   expiry comes no later than Redis'.
 * - Never served after an eviction notice arrived: the notice deletes the entry, and a reply
 *   still in flight when a notice for its key (or a reset) arrives is not stored at all, since
 *   the reply and the notice travel on different connections and may arrive in either order.
 * - Never served while notices may be lost: entries are kept and stored only while the notice
 *   subscription is live, and the whole cache is flushed when the subscriber connection closes
 *   and again when the subscription is confirmed.
 * - Bounded: at most `maxEntries` outcomes of at most `maxBytes` in all, least recently used
 *   first out; each counts two bytes per payload character (its length, known without a scan).
 */
import { LRUCache } from 'lru-cache';
import type { HeldOutcome } from '@oncely/core';
import { ENTRY_OVERHEAD_BYTES, textBytes } from '@oncely/core/adapter';
import type { RedisNearCacheOptions } from '../connection/near-cache-bounds.js';
import type { NoticeKind } from './flight-notices.js';
import type { NoticeObserver } from './notice-hub.js';

interface Entry {
  readonly outcome: HeldOutcome;
  /** `performance.now()` at which the Redis key may be gone. */
  readonly expiresAt: number;
}

/** One command that may see an outcome: taken before it is sent, settled with its answer. */
export interface NearCacheTicket {
  readonly key: string;
  readonly sentAt: number;
  readonly epoch: number;
  readonly seq: number;
}

interface Watch {
  tickets: number;
  /** `seq` of the latest notice for the key. */
  noticed: number;
}

export class FlightNearCache implements NoticeObserver {
  private readonly entries: LRUCache<string, Entry>;
  private live = false;
  /** Grows at every reset: a ticket from an earlier epoch stores nothing. */
  private epoch = 0;
  /** Grows at every eviction notice. */
  private seq = 0;
  /** Keys with a ticket outstanding (bounded by the calls in flight). */
  private readonly watched = new Map<string, Watch>();

  constructor(bounds: Required<RedisNearCacheOptions>) {
    // An outcome larger than maxBytes alone is not kept (lru-cache refuses it).
    this.entries = new LRUCache({
      max: bounds.maxEntries,
      maxSize: bounds.maxBytes,
      sizeCalculation: (entry, key) =>
        ENTRY_OVERHEAD_BYTES + textBytes(key) + textBytes(entry.outcome.payload),
    });
  }

  /** Entries held (expired ones included until they are read or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes of the entries held, as `maxBytes` counts them. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** The outcome of `key`, if near-cached and alive. */
  get(key: string): HeldOutcome | undefined {
    if (!this.live) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (performance.now() < entry.expiresAt) return entry.outcome;
    this.entries.delete(key);
    return undefined;
  }

  /** Call right before sending a command whose answer may be stored; settle it in every case. */
  ticket(key: string): NearCacheTicket {
    const watch = this.watched.get(key);
    if (watch) watch.tickets += 1;
    else this.watched.set(key, { tickets: 1, noticed: 0 });
    return { key, sentAt: performance.now(), epoch: this.epoch, seq: this.seq };
  }

  /**
   * Ends `ticket`; with an outcome Redis holds for `ttlMs` more (counted from the ticket's
   * `sentAt`), stores it unless a reset or a notice for its key came in between.
   */
  settle(ticket: NearCacheTicket, outcome?: HeldOutcome, ttlMs?: number): void {
    const watch = this.watched.get(ticket.key);
    if (!watch) return;
    watch.tickets -= 1;
    if (watch.tickets === 0) this.watched.delete(ticket.key);
    if (!outcome || ttlMs === undefined || ttlMs <= 0) return;
    if (!this.live || ticket.epoch !== this.epoch || watch.noticed > ticket.seq) return;
    this.entries.set(ticket.key, { outcome, expiresAt: ticket.sentAt + ttlMs });
  }

  /** Drops `key` (this process evicted it; its notice does the same everywhere else). */
  drop(key: string): void {
    this.seq += 1;
    const watch = this.watched.get(key);
    if (watch) watch.noticed = this.seq;
    this.entries.delete(key);
  }

  notice(kind: NoticeKind, key: string): void {
    // A release means a lease ended; an outcome it stored is new, never one held here.
    if (kind === 'evicted') this.drop(key);
  }

  reset(live: boolean): void {
    this.live = live;
    this.epoch += 1;
    this.entries.clear();
  }

  clear(): void {
    this.entries.clear();
  }
}
