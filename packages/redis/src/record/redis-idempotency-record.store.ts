import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import {
  LeaseLostError,
  type BeginOptions,
  type BeginOutcome,
  type IdempotencyRecordStore,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { decodeStoredResponse, encodeStoredResponse, recordKeyHash } from '@oncely/core/adapter';
import { InvalidRedisOptionError } from '../connection/invalid-redis-option.error.js';
import { createClient, isClient } from '../connection/redis-clients.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import { recordKeys, type RecordKeys } from './record-key.js';
import { defineRecordScripts, type BeginReply, type RecordScripts } from './record-scripts.js';
import type { RedisIdempotencyRecordStoreOptions } from './redis-idempotency-record-store.options.js';

/**
 * Durable idempotency records in Redis, for services without SQL and as the fast option: one hash
 * per identity at `<keyPrefix>{<keyHash>}:record`, changed only by Lua scripts (`lua/record-*`),
 * each call one atomic round trip; a replay comes back with `begin` itself.
 *
 * Lifecycle: an in-progress record's key lives for its lease plus the retention; once its lease
 * has expired `begin` treats it as absent (taken over with the next fence, whatever the digest),
 * yet its owner may still complete, renew or release it until then. A completed record's key
 * lives for the retention. Leases and TTLs use the Redis server's clock only; fences grow per
 * identity even across deletions (see `record-begin-n.lua`).
 *
 * With `previousIdentities`, standalone Redis (Sentinel included) reads the previous versions'
 * records and claims in one script; a Cluster, where they live in other slots, claims first and
 * reads them after (see `begin`).
 *
 * Durability is whatever the Redis deployment gives (AOF `everysec` can lose the last second on a
 * crash; an asynchronous replica can lose acknowledged writes on failover); for the last line of
 * defence of a payment, prefer the TypeORM store inside the business transaction.
 */
export class RedisIdempotencyRecordStore implements IdempotencyRecordStore {
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly scripts: RecordScripts;
  private readonly keys: RecordKeys;
  /** `begin` is one round trip to Redis: no guard flight goes in front of it. */
  readonly answersAtCacheSpeed = true;

  /**
   * @param connection the same shapes `RedisFlightCoordinator` takes: an ioredis `Redis` or
   *   `Cluster` (stays yours: `close` leaves it open, and one client may serve both), or a
   *   `redis://` URL or options for a client (`RedisOptions`) or cluster
   *   (`{ clusterNodes, clusterOptions }`) the store creates and `close` quits.
   */
  constructor(connection: RedisConnection, options: RedisIdempotencyRecordStoreOptions = {}) {
    this.keys = recordKeys(options.keyPrefix);
    this.ownsClient = !isClient(connection);
    this.client = isClient(connection) ? connection : createClient(connection);
    this.scripts = defineRecordScripts(this.client);
  }

  async begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    const leaseTtlMs = wholeMs('leaseTtlMs', options.leaseTtlMs);
    const retentionMs = wholeMs('retentionMs', options.retentionMs);
    const keyHash = recordKeyHash(identity);
    const ownerToken = randomUUID();
    const previous = (options.previousIdentities ?? []).map((previousIdentity) => ({
      identity: previousIdentity,
      key: this.recordKey(previousIdentity),
    }));
    // On a Cluster the previous records live in other slots than this one: no script may touch
    // them together, so they are read after the claim (`claimedThenChecked`).
    const atOnce = this.client.isCluster ? [] : previous;
    const keys = [this.recordKey(identity), ...atOnce.map(({ key }) => key)];
    // Taken before the call: the lease began no earlier, so whatever the offset between this
    // clock and Redis', the holder's `leaseExpiresAt` is never later than the real expiry.
    const sentAt = Date.now();
    const owners = ownersOf(options);
    const reply = await this.scripts.begin(
      keys.length,
      ...keys,
      identity,
      digest,
      ownerToken,
      leaseTtlMs,
      retentionMs,
      ...owners,
    );
    const kind = reply[0].toString('latin1');
    if (kind !== 'acquired') {
      const keyIndex = (reply[kind === 'foreign_owner' ? 2 : 5] as number | undefined) ?? 1;
      return outcomeOf(reply, atOnce[keyIndex - 2]?.identity);
    }
    const lease: RecordLease = {
      identity,
      keyHash,
      ownerToken,
      fence: reply[1] as number,
      leaseExpiresAt: new Date(sentAt + leaseTtlMs),
    };
    if (atOnce.length === previous.length) return { kind: 'acquired', lease };
    return this.claimedThenChecked(lease, digest, owners, previous);
  }

  /**
   * The Cluster's order: the record is claimed first, then each previous record is read, and the
   * claim is given back when one of them answers. A begin listing this identity as previous,
   * doing the same, either sees this claim or was seen by it, so the two never both run; at worst
   * both stand back and answer 409 until one is retried.
   */
  private async claimedThenChecked(
    lease: RecordLease,
    digest: string,
    owners: readonly [string, string],
    previous: readonly { identity: string; key: string }[],
  ): Promise<BeginOutcome> {
    try {
      for (const record of previous) {
        const reply = await this.scripts.previous(record.key, digest, ...owners);
        if (reply[0].toString('latin1') === 'absent') continue;
        await this.release(lease);
        return outcomeOf(reply, record.identity);
      }
    } catch (error) {
      await this.release(lease).catch(() => undefined);
      throw error;
    }
    return { kind: 'acquired', lease };
  }

  async complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    const encoded = encodeStoredResponse(response);
    const completed = await this.scripts.complete(
      this.recordKey(lease.identity),
      lease.ownerToken,
      String(lease.fence),
      String(encoded.status),
      encoded.headers,
      encoded.bodyKind,
      encoded.body === null ? noBytes : asBuffer(encoded.body),
    );
    if (completed !== 1) {
      throw new LeaseLostError(lease.identity, lease.fence);
    }
  }

  async release(lease: RecordLease): Promise<void> {
    await this.scripts.release(
      this.recordKey(lease.identity),
      lease.ownerToken,
      String(lease.fence),
    );
  }

  async renew(lease: RecordLease, leaseTtlMs: number): Promise<boolean> {
    const renewed = await this.scripts.renew(
      this.recordKey(lease.identity),
      lease.ownerToken,
      String(lease.fence),
      wholeMs('leaseTtlMs', leaseTtlMs),
    );
    return renewed === 1;
  }

  /**
   * Always 0: every record key carries its own TTL (lease + retention while in progress, the
   * retention once completed), so Redis deletes expired records by itself (on access and in its
   * background expiry cycle) and `begin` never sees one. Keeping an index only to purge it would
   * cost a write per call and buy nothing.
   */
  async purgeExpired(_batchSize: number): Promise<number> {
    return 0;
  }

  /** Quits the client if the store created it; a client passed in is left open. */
  async close(): Promise<void> {
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }

  /** The Redis key of `identity`'s record (exposed for operators and tests); see `recordKey`. */
  recordKey(identity: string): string {
    return this.keys.of(identity);
  }
}

const noBytes = Buffer.alloc(0);

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The begin scripts' service and shared arguments: '' compares no owners. */
function ownersOf(options: BeginOptions): [string, string] {
  return [options.owner ?? '', options.shared === true ? '1' : '0'];
}

/** A begin reply other than `acquired` as an outcome; a replay names a previous record's identity. */
function outcomeOf(reply: BeginReply, previousIdentity: string | undefined): BeginOutcome {
  const kind = reply[0].toString('latin1');
  switch (kind) {
    case 'replay': {
      const response = decodeReplay(reply);
      return previousIdentity === undefined
        ? { kind, response }
        : { kind, response, previousIdentity };
    }
    case 'mismatch':
      return { kind };
    case 'foreign_owner': {
      const owner = (reply[1] as Buffer).toString('utf8');
      return previousIdentity === undefined ? { kind, owner } : { kind, owner, previousIdentity };
    }
    case 'in_progress':
      return { kind, retryAfterMs: reply[1] as number };
    default:
      throw new Error(`Unexpected reply "${kind}" from the record begin script.`);
  }
}

function decodeReplay(reply: BeginReply): StoredResponse {
  const [, status, headers, bodyKind, body] = reply as Buffer[];
  return decodeStoredResponse({
    status: Number(status!.toString('latin1')),
    headers: headers!.toString('utf8'),
    bodyKind: bodyKind!.toString('latin1') as StoredResponse['body']['kind'],
    // A copy: the reply may be a view into the parser's shared pool or a larger socket chunk.
    body: new Uint8Array(body!),
  });
}

/**
 * Scripts work in whole milliseconds; a fraction is rounded up so a lease never shrinks, and
 * every lease lasts at least 1 ms, which keeps fences below the Redis time they were issued at.
 */
function wholeMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidRedisOptionError(
      name,
      `expected a positive number of milliseconds, got ${value}.`,
    );
  }
  return Math.ceil(value);
}
