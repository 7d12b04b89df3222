import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../time/clock.js';
import type {
  BeginOptions,
  BeginOutcome,
  IdempotencyRecordStore,
  RecordLease,
} from './idempotency-record-store.port.js';
import { positiveWholeNumber } from './invalid-record-option.error.js';
import { InMemoryCapacityError } from '../errors/in-memory-capacity.error.js';
import { LeaseLostError } from '../errors/lease-lost.error.js';
import { recordKeyHash } from './record-key-hash.js';
import {
  decodeStoredResponse,
  encodeStoredResponse,
  encodedResponseBytes,
  sharedReplayOf,
} from './stored-response.codec.js';
import { answerOf, copyOf, recordBytes, type MemoryRecord } from './memory-record.js';
import type { StoredResponse } from './stored-response.js';
import type {
  ForceReleaseOutcome,
  IdempotencyRecordAdmin,
  RecordInspection,
} from './idempotency-record-admin.port.js';
import type { IdempotencyRecordListing, RecordSummary } from './idempotency-record-listing.port.js';

/** Options of `InMemoryIdempotencyRecordStore`. */
export interface InMemoryIdempotencyRecordStoreOptions {
  /** Time source for leases and retention; inject a fake one in tests. */
  readonly clock?: Clock;
  /**
   * How often (ms) a `begin` also sweeps every expired record out of memory, so a long-running
   * process does not need to call `purgeExpired` itself. Default 60 000.
   */
  readonly sweepIntervalMs?: number;
  /**
   * Most records held, in progress and completed alike (default 100 000, about 100 MB with
   * 1 KB responses). None is ever dropped before it expires, since that would let a duplicate
   * run: at the bound, expired records are swept and, if none was, a `begin` for a new key is
   * refused with `InMemoryCapacityError` (a 503 with `Retry-After`) while existing keys keep
   * replaying.
   */
  readonly maxRecords?: number;
  /**
   * Most bytes held by records, responses included (default 256 MiB): the body as stored, two
   * bytes per character of text (headers, identity, fingerprint, owner) and 256 per record for
   * its objects. The same rule as `maxRecords`: no live record is dropped, so once the records
   * held reach it, expired ones are swept and, if that freed too little, a `begin` for a new key
   * is refused with `InMemoryCapacityError` while existing keys keep replaying. The bound is
   * checked when a key is taken: a response completing a record already taken is always kept
   * (refusing it would make the retry run the work again), so the heap may pass it by the
   * responses of the records in progress at that moment, each at most the route's
   * `maxResponseBytes`.
   */
  readonly maxBytes?: number;
}

/** Default of `maxRecords`. */
export const DEFAULT_MAX_RECORDS = 100_000;

/**
 * Default of `maxBytes`: 256 MiB. The store is the only copy of every record it holds, so it
 * gets more room than a cache; it is still a small share of a server's heap, and past it a
 * single-instance service is better served by a shared store.
 */
export const DEFAULT_MAX_RECORD_BYTES = 256 * 1024 * 1024;

/**
 * The embedded default: records in this process's memory, with the port's exact semantics
 * (fences, leases, retention). Nothing survives a restart and nothing is shared between
 * processes, so it only guards a single-instance service; use `@oncely/typeorm` or
 * `@oncely/redis` for more. Responses are encoded as a durable store would keep them, so a
 * replay here returns what a database would.
 */
export class InMemoryIdempotencyRecordStore
  implements IdempotencyRecordStore, IdempotencyRecordAdmin, IdempotencyRecordListing
{
  private readonly records = new Map<string, MemoryRecord>();
  private readonly clock: Clock;
  /**
   * `begin` answers from this process's memory, faster than a guard flight in front of it could.
   * Records are this process's alone, so a service of several instances needs a shared store
   * whatever the coordinator (in production the module refuses to start on this one otherwise).
   */
  readonly answersAtCacheSpeed: boolean = true;
  private readonly sweepIntervalMs: number;
  private nextSweepAt: number;
  private readonly maxRecords: number;
  private readonly maxBytes: number;
  /** Bytes of the records held (see `maxBytes`), expired ones included until swept. */
  private heldBytes = 0;
  /**
   * No record expires before this: a full store need not sweep again until then. Lowered by every
   * record set, raised by each sweep.
   */
  private firstExpiryAt = Number.POSITIVE_INFINITY;

  constructor(options: InMemoryIdempotencyRecordStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.sweepIntervalMs = positiveWholeNumber(
      'sweepIntervalMs',
      options.sweepIntervalMs ?? 60_000,
    );
    this.maxRecords = positiveWholeNumber('maxRecords', options.maxRecords ?? DEFAULT_MAX_RECORDS);
    this.maxBytes = positiveWholeNumber('maxBytes', options.maxBytes ?? DEFAULT_MAX_RECORD_BYTES);
    this.nextSweepAt = this.clock.now() + this.sweepIntervalMs;
  }

  /** What the start-up log calls it. */
  describe(): string {
    return 'in-memory (this process only)';
  }

  /** How many records are held, expired ones included until they are swept. */
  get size(): number {
    return this.records.size;
  }

  /** Bytes of the records held as `maxBytes` counts them, expired ones until they are swept. */
  get bytes(): number {
    return this.heldBytes;
  }

  async begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    const leaseTtlMs = positiveWholeNumber('leaseTtlMs', options.leaseTtlMs);
    const retentionMs = positiveWholeNumber('retentionMs', options.retentionMs);
    const now = this.clock.now();
    this.sweepIfDue(now);
    const keyHash = recordKeyHash(identity);
    const existing = this.records.get(keyHash);
    const own = existing && answerOf(existing, digest, now, options);
    if (own) return own;
    for (const previousIdentity of options.previousIdentities ?? []) {
      const previousHash = recordKeyHash(previousIdentity);
      const previous = this.records.get(previousHash);
      if (!previous) continue;
      const answer = answerOf(previous, digest, now, options);
      if (answer) {
        return answer.kind === 'replay' || answer.kind === 'foreign_owner'
          ? { ...answer, previousIdentity }
          : answer;
      }
      // Abandoned under a previous version: its holder must not confirm after this one runs.
      if (!previous.response) this.drop(previousHash);
    }
    if (!existing) this.makeRoom(now);
    const lease: RecordLease = {
      identity,
      keyHash,
      ownerToken: randomUUID(),
      // A takeover of an expired record bumps the fence, so its previous owner is fenced off.
      fence: (existing?.fence ?? 0) + 1,
      leaseExpiresAt: new Date(now + leaseTtlMs),
    };
    this.put(keyHash, {
      identity,
      fingerprint: digest,
      ...(options.owner !== undefined && { owner: options.owner }),
      ownerToken: lease.ownerToken,
      fence: lease.fence,
      retentionMs,
      expiresAt: now + leaseTtlMs,
    });
    this.firstExpiryAt = Math.min(this.firstExpiryAt, now + leaseTtlMs);
    return { kind: 'acquired', lease };
  }

  peekReplay(identity: string, digest: string, options: BeginOptions): StoredResponse | undefined {
    const record = this.records.get(recordKeyHash(identity));
    const answer = record && answerOf(record, digest, this.clock.now(), options, sharedReplayOf);
    return answer?.kind === 'replay' ? answer.response : undefined;
  }

  async complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    const encoded = encodeStoredResponse(response);
    const record = this.heldRecord(lease);
    if (!record) throw new LeaseLostError(lease.identity, lease.fence);
    record.response = copyOf(encoded);
    this.heldBytes += encodedResponseBytes(record.response);
    this.expireAt(record, this.clock.now() + record.retentionMs);
  }

  async release(lease: RecordLease): Promise<void> {
    if (this.heldRecord(lease)) this.drop(lease.keyHash);
  }

  async renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    positiveWholeNumber('leaseTtlMs', leaseTtlMs);
    const record = this.heldRecord(lease);
    if (!record) return false;
    this.expireAt(record, this.clock.now() + leaseTtlMs);
    return true;
  }

  async purgeExpired(batchSize: number): Promise<number> {
    positiveWholeNumber('batchSize', batchSize);
    const now = this.clock.now();
    let purged = 0;
    for (const [keyHash, record] of this.records) {
      if (purged >= batchSize) break;
      if (record.expiresAt <= now) {
        this.drop(keyHash);
        purged += 1;
      }
    }
    return purged;
  }

  async inspect(identity: string): Promise<RecordInspection> {
    const keyHash = recordKeyHash(identity);
    const record = this.records.get(keyHash);
    if (!record || record.expiresAt <= this.clock.now()) return { kind: 'absent', keyHash };
    const common = {
      keyHash,
      fingerprint: record.fingerprint,
      ...(record.owner !== undefined && { owner: record.owner }),
      fence: record.fence,
    };
    if (!record.response) {
      return { kind: 'in_progress', ...common, leaseExpiresAt: new Date(record.expiresAt) };
    }
    return {
      kind: 'completed',
      ...common,
      expiresAt: new Date(record.expiresAt),
      response: decodeStoredResponse(copyOf(record.response)),
    };
  }

  async forceRelease(identity: string): Promise<ForceReleaseOutcome> {
    const keyHash = recordKeyHash(identity);
    const record = this.records.get(keyHash);
    const now = this.clock.now();
    if (!record || record.expiresAt <= now) return { kind: 'absent' };
    if (record.response) return { kind: 'completed' };
    // Expired under a foreign owner rather than deleted: the holder can no longer confirm and
    // the next `begin` takes it over with a higher fence.
    this.put(keyHash, {
      ...record,
      ownerToken: `released:${randomUUID()}`,
      expiresAt: now,
    });
    this.firstExpiryAt = now;
    return { kind: 'released', fence: record.fence };
  }

  async *listRecords(
    operation: string,
    // The whole map is in memory: there is nothing to batch.
    _options?: { readonly batchSize?: number },
  ): AsyncIterable<RecordSummary> {
    const prefix = `${operation}:`;
    const now = this.clock.now();
    for (const [keyHash, record] of [...this.records]) {
      if (record.expiresAt <= now || !record.identity.startsWith(prefix)) continue;
      yield {
        identity: record.identity,
        keyHash,
        kind: record.response ? 'completed' : 'in_progress',
        ...(record.owner !== undefined && { owner: record.owner }),
        expiresAt: new Date(record.expiresAt),
      };
    }
  }

  async deleteRecord(identity: string): Promise<boolean> {
    const keyHash = recordKeyHash(identity);
    const record = this.records.get(keyHash);
    if (!record) return false;
    // A holder's fenced `complete` then finds no record and fails with `LeaseLostError`.
    this.drop(keyHash);
    return record.expiresAt > this.clock.now();
  }

  /**
   * The record `lease` still holds: same owner and fence, not completed. An expired lease that
   * nobody took over yet still holds, as in the durable stores: the fence, not the clock,
   * decides who may confirm.
   */
  private heldRecord(lease: RecordLease): MemoryRecord | undefined {
    const record = this.records.get(lease.keyHash);
    if (
      !record ||
      record.response ||
      record.ownerToken !== lease.ownerToken ||
      record.fence !== lease.fence
    ) {
      return undefined;
    }
    return record;
  }

  private expireAt(record: MemoryRecord, expiresAt: number): void {
    record.expiresAt = expiresAt;
    this.firstExpiryAt = Math.min(this.firstExpiryAt, expiresAt);
  }

  /** Holds `record` under `keyHash`, in place of the one there, counting its bytes. */
  private put(keyHash: string, record: MemoryRecord): void {
    const replaced = this.records.get(keyHash);
    if (replaced) this.heldBytes -= recordBytes(replaced);
    this.records.set(keyHash, record);
    this.heldBytes += recordBytes(record);
  }

  private drop(keyHash: string): void {
    const record = this.records.get(keyHash);
    if (!record) return;
    this.records.delete(keyHash);
    this.heldBytes -= recordBytes(record);
  }

  private sweepIfDue(now: number): void {
    if (now >= this.nextSweepAt) this.sweep(now);
  }

  /**
   * Makes room for one more record, by sweeping the expired ones if the store is full (by count
   * or by bytes), or refuses: a live record is never dropped. Sweeps at most once per expiry,
   * however many new keys a full store refuses meanwhile.
   */
  private makeRoom(now: number): void {
    if (!this.full()) return;
    if (now >= this.firstExpiryAt) this.sweep(now);
    const full = this.full();
    if (!full) return;
    throw new InMemoryCapacityError(
      'InMemoryIdempotencyRecordStore',
      full,
      full === 'maxRecords' ? this.maxRecords : this.maxBytes,
      this.firstExpiryAt - now,
      full === 'maxRecords' ? 'entries' : 'bytes',
    );
  }

  /** The bound the records held have reached, if any. */
  private full(): 'maxRecords' | 'maxBytes' | undefined {
    if (this.records.size >= this.maxRecords) return 'maxRecords';
    return this.heldBytes >= this.maxBytes ? 'maxBytes' : undefined;
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + this.sweepIntervalMs;
    let firstExpiryAt = Number.POSITIVE_INFINITY;
    for (const [keyHash, record] of this.records) {
      if (record.expiresAt <= now) this.drop(keyHash);
      else firstExpiryAt = Math.min(firstExpiryAt, record.expiresAt);
    }
    this.firstExpiryAt = firstExpiryAt;
  }
}
