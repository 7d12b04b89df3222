import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import {
  LeaseLostError,
  type BeginOptions,
  type BeginOutcome,
  type ClaimRegistrySource,
  type IdempotencyRecordStore,
  type RecordLease,
  type StoredResponse,
} from '@oncely/core';
import { encodeStoredResponse, recordKeyHash, sharedReplayOf } from '@oncely/core/adapter';
import { RedisClaimRegistry } from '../claims/redis-claim.registry.js';
import { InvalidRedisOptionError } from '../connection/invalid-redis-option.error.js';
import { keyPrefix } from '../connection/key-prefix.js';
import { nearCacheBoundsOf } from '../connection/near-cache-bounds.js';
import { redisAddress } from '../connection/redis-address.js';
import { createClient, duplicateForNotices, isClient } from '../connection/redis-clients.js';
import { probeRedis } from '../connection/redis-probe.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import { recordKeys, type RecordKeys } from './record-key.js';
import { RecordNearCache, recordNoticesChannel, type NearCacheStats } from './record-near-cache.js';
import { answerOf, responseOf } from './record-outcome.js';
import { defineRecordScripts, type BeginReply, type RecordScripts } from './record-scripts.js';
import { recordTail, responsePart } from './record-value.js';
import type { RedisIdempotencyRecordStoreOptions } from './redis-idempotency-record-store.options.js';

/** What `complete` needs to near-cache the record it completes, kept per lease. */
interface Claim {
  readonly digest: string;
  readonly service: string;
  readonly retentionMs: number;
}

/**
 * Durable idempotency records in Redis, for services without SQL and as the fast option: one
 * string per identity at `<keyPrefix><namespace>:<operation>:<version>:{<keyHash>}:record` (see
 * `recordKey`), changed only by Lua scripts (`lua/record-*`), each call one atomic round trip. A
 * miss costs Redis four commands (TIME and `SET … NX GET` to claim, GET and SET to complete), a
 * replay two, and a replay of a record this process has seen none (`nearCache`).
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
export class RedisIdempotencyRecordStore implements IdempotencyRecordStore, ClaimRegistrySource {
  #claims: RedisClaimRegistry | undefined;
  private readonly keyPrefix: string;
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly scripts: RecordScripts;
  private readonly keys: RecordKeys;
  private readonly nearCache: RecordNearCache | undefined;
  private readonly claims = new WeakMap<RecordLease, Claim>();
  private readonly closeNearCache: () => void;
  /** `begin` is one round trip to Redis: no guard flight goes in front of it. */
  readonly answersAtCacheSpeed = true;

  /**
   * @param connection the same shapes `RedisFlightCoordinator` takes: an ioredis `Redis` or
   *   `Cluster` (stays yours: `close` leaves it open, and one client may serve both), or a
   *   `redis://` URL or options for a client (`RedisOptions`) or cluster
   *   (`{ clusterNodes, clusterOptions }`) the store creates and `close` quits. With the near
   *   cache on, the store also opens a subscriber connection like it, closed by `close` or when
   *   the client ends.
   */
  constructor(connection: RedisConnection, options: RedisIdempotencyRecordStoreOptions = {}) {
    this.keys = recordKeys(options.keyPrefix);
    this.keyPrefix = keyPrefix(options.keyPrefix);
    const nearCacheBounds = nearCacheBoundsOf(options.nearCache);
    this.ownsClient = !isClient(connection);
    const client = (this.client = isClient(connection) ? connection : createClient(connection));
    this.scripts = defineRecordScripts(client);
    // ioredis moves a Cluster's subscriber to another node without an event to flush on, so
    // notices lost on the way could leave a deleted record served: no near cache there.
    if (nearCacheBounds === undefined || client.isCluster) {
      this.nearCache = undefined;
      this.closeNearCache = () => undefined;
      return;
    }
    const nearCache = (this.nearCache = new RecordNearCache(
      nearCacheBounds,
      recordNoticesChannel(this.keyPrefix),
      () => duplicateForNotices(client),
    ));
    // A client that ends ends the store: its subscriber must not keep the process alive.
    const closers = closersOnEnd(client);
    this.closeNearCache = () => {
      closers.delete(this.closeNearCache);
      nearCache.close();
    };
    closers.add(this.closeNearCache);
  }

  /** Answers from the near cache only: without it (`nearCache: false`, Cluster) never. */
  peekReplay(identity: string, digest: string, options: BeginOptions): StoredResponse | undefined {
    const near = this.nearCache?.answer(identity, digest, options);
    return near === undefined ? undefined : sharedReplayOf(near);
  }

  async begin(identity: string, digest: string, options: BeginOptions): Promise<BeginOutcome> {
    const near = this.nearCache?.answer(identity, digest, options);
    if (near !== undefined) return { kind: 'replay', response: responseOf(near) };
    const leaseTtlMs = wholeMs('leaseTtlMs', options.leaseTtlMs);
    const retentionMs = wholeMs('retentionMs', options.retentionMs);
    const keyHash = recordKeyHash(identity);
    const ownerToken = randomUUID();
    const previous = options.previousIdentities ?? [];
    // On a Cluster the previous records live in other slots than this one: no script may touch
    // them together, so they are read after the claim (`claimedThenChecked`).
    const atOnce = this.client.isCluster ? [] : previous;
    const keys = [identity, ...atOnce].map(this.keys.of);
    const mark = this.nearCache?.mark() ?? 0;
    // Taken before the call: the lease began no earlier, so whatever the offset between this
    // clock and Redis', the holder's `leaseExpiresAt` is never later than the real expiry.
    const sentAt = Date.now();
    const reply = await this.scripts.begin(
      keys.length,
      ...keys,
      recordTail(retentionMs, digest, options.owner ?? '', identity, ownerToken),
      leaseTtlMs,
      retentionMs,
    );
    if (reply[0].toString('latin1') !== 'acquired') {
      // A `record` reply names the KEYS index of the record that answered.
      const answeredBy = atOnce[(reply[3] as number) - 2];
      return this.answered(reply, answeredBy, options, digest, sentAt, mark);
    }
    const lease: RecordLease = {
      identity,
      keyHash,
      ownerToken,
      fence: reply[1] as number,
      leaseExpiresAt: new Date(sentAt + leaseTtlMs),
    };
    this.claims.set(lease, { digest, service: options.owner ?? '', retentionMs });
    if (atOnce.length === previous.length) return { kind: 'acquired', lease };
    return this.claimedThenChecked(lease, digest, options, previous);
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
    options: BeginOptions,
    previous: readonly string[],
  ): Promise<BeginOutcome> {
    try {
      for (const identity of previous) {
        const reply = await this.scripts.previous(this.keys.of(identity));
        if (reply[0].toString('latin1') === 'absent') continue;
        await this.release(lease);
        return answerOf(reply, identity, options, digest).outcome;
      }
    } catch (error) {
      await this.release(lease).catch(() => undefined);
      throw error;
    }
    return { kind: 'acquired', lease };
  }

  /** A begin's answer; a completed record joins the near cache. */
  private answered(
    reply: BeginReply,
    previousIdentity: string | undefined,
    options: BeginOptions,
    digest: string,
    sentAt: number,
    mark: number,
  ): BeginOutcome {
    const { outcome, completed, nowMs } = answerOf(reply, previousIdentity, options, digest);
    if (completed !== undefined && nowMs !== undefined) {
      // The key lives at least until the retention after its holder's begin: completion came
      // later, and the script read Redis' clock after this one's `sentAt`.
      const remainingMs = completed.createdAt + completed.retentionMs - nowMs;
      this.nearCache?.remember(
        completed.identity,
        {
          digest: completed.digest,
          service: completed.service,
          response: completed.response!,
          expiresAt: sentAt + remainingMs,
        },
        mark,
      );
    }
    return outcome;
  }

  async complete(lease: RecordLease, response: StoredResponse): Promise<void> {
    const encoded = encodeStoredResponse(response);
    const mark = this.nearCache?.mark() ?? 0;
    const sentAt = Date.now();
    const completed = await this.scripts.complete(
      this.recordKey(lease.identity),
      lease.ownerToken,
      String(lease.fence),
      responsePart(encoded),
    );
    if (completed !== 1) {
      throw new LeaseLostError(lease.identity, lease.fence);
    }
    const claim = this.claims.get(lease);
    if (claim === undefined || this.nearCache === undefined) return;
    this.nearCache.remember(
      lease.identity,
      {
        digest: claim.digest,
        service: claim.service,
        // Copied: the caller's bytes may change after this call.
        response: encoded.body === null ? encoded : { ...encoded, body: encoded.body.slice() },
        expiresAt: sentAt + claim.retentionMs,
      },
      mark,
    );
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
   * cost a write per call and buy nothing. Near-cached records expire by the same TTL.
   */
  async purgeExpired(_batchSize: number): Promise<number> {
    return 0;
  }

  /**
   * The registry the idempotency claims of the engine go to: this Redis, under this key prefix
   * (`RedisClaimRegistry`), on this store's client.
   */
  claimRegistry(): RedisClaimRegistry {
    this.#claims ??= new RedisClaimRegistry(this.client, { keyPrefix: this.keyPrefix });
    return this.#claims;
  }

  /** What the start-up line says: `Redis redis://host:port (prefix oncely:)`, no password. */
  describe(): string {
    return `${redisAddress(this.client)} (prefix ${this.keyPrefix})`;
  }

  /** Resolves once Redis answers a PING; rejects within `timeoutMs` otherwise (`probeRedis`). */
  probe(timeoutMs: number): Promise<void> {
    return probeRedis(this.client, timeoutMs);
  }

  /**
   * Closes the near cache's subscriber, and quits the client if the store created it; a client
   * passed in is left open.
   */
  async close(): Promise<void> {
    this.closeNearCache();
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }

  /** The Redis key of `identity`'s record (exposed for operators and tests); see `recordKey`. */
  recordKey(identity: string): string {
    return this.keys.of(identity);
  }

  /**
   * The near cache's state: entries held, and whether they are served (its notice subscription
   * is confirmed); `undefined` when `nearCache` is off.
   */
  nearCacheStats(): NearCacheStats | undefined {
    return this.nearCache?.stats();
  }
}

/** Near caches to close when a client ends, one 'end' listener per client however many stores. */
const nearCachesByClient = new WeakMap<Redis | Cluster, Set<() => void>>();

function closersOnEnd(client: Redis | Cluster): Set<() => void> {
  let closers = nearCachesByClient.get(client);
  if (closers === undefined) {
    const created = (closers = new Set());
    nearCachesByClient.set(client, created);
    client.once('end', () => {
      nearCachesByClient.delete(client);
      for (const close of [...created]) close();
    });
  }
  return closers;
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
