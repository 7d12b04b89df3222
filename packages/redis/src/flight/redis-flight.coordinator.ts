import type {
  AcquireOutcome,
  ClaimRegistrySource,
  FlightCoordinator,
  FlightEntry,
  FlightInspection,
  FlightInspectionAdmin,
  FlightLeaseAdmin,
  FlightOutcome,
  HeldOutcome,
} from '@oncely/core';
import type { Cluster, Redis } from 'ioredis';
import { RedisClaimRegistry } from '../claims/redis-claim.registry.js';
import { InvalidRedisOptionError } from '../connection/invalid-redis-option.error.js';
import { keyPrefix } from '../connection/key-prefix.js';
import { nearCacheBoundsOf } from '../connection/near-cache-bounds.js';
import { redisAddress } from '../connection/redis-address.js';
import { RedisAvailability } from '../connection/redis-availability.js';
import { coordinatorClient, duplicateForNotices } from '../connection/redis-clients.js';
import { probeRedis } from '../connection/redis-probe.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import { toFlightInspection } from './flight-inspection.js';
import { businessKeyOf, flightKey, flightKeyPattern } from './flight-keys.js';
import { FlightNearCache } from './flight-near-cache.js';
import { noticeMessage } from './flight-notices.js';
import { defineFlightScripts, type FlightScripts } from './flight-scripts.js';
import { retainNoticeHub, type LeaseCheck, type NoticeHub } from './notice-hub.js';
import type { RedisFlightCoordinatorOptions } from './redis-flight-coordinator.options.js';

/**
 * `FlightCoordinator` on Redis (standalone or Cluster) through ioredis: each port method is one
 * Lua script run (one round trip) on one key per business key, which holds the lease, the cached
 * result or the cached error, so `SET NX GET` decides an `acquire` in one command. The key
 * carries the business key as cluster hash tag. Completion notices travel on one pub/sub channel
 * per key prefix, published only when a follower is waiting (a mark its busy `acquire` sets in
 * the lease), so a flight nobody waits for sends no message to the subscribed processes.
 *
 * Cached outcomes this process has seen (as leader, or from Redis) are served from a bounded
 * near cache without a round trip until their Redis key expires (see the `nearCache` option);
 * an operator's `evictResult` publishes a notice that drops them in every process.
 *
 * Notices use classic PUBLISH on one channel rather than sharded pub/sub: a sharded channel must
 * hash to the slot of the keys the script touches, so it would be a channel per business key, and
 * every follower would pay SSUBSCRIBE/SUNSUBSCRIBE round trips and race its subscription against
 * the leader's notice. One channel is subscribed once per process; in a cluster the notice is
 * broadcast over the cluster bus, a fixed cost per completion that a subscriber on any node sees.
 *
 * While Redis is unreachable every call fails within `commandTimeout` with
 * `CoordinatorUnavailableError`, and coordination resumes by itself once ioredis reconnects. On a
 * client you pass in, prefer `maxRetriesPerRequest: 0` and `enableOfflineQueue: false`: with
 * ioredis' defaults a command caught by a disconnect stays queued and still runs after Redis
 * returns, though the coordinator gave up on it (at worst a lease nobody completes, until its
 * TTL ends).
 */
export class RedisFlightCoordinator
  implements FlightCoordinator, FlightLeaseAdmin, FlightInspectionAdmin, ClaimRegistrySource
{
  #claims: RedisClaimRegistry | undefined;
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly scripts: FlightScripts;
  private readonly availability: RedisAvailability;
  private readonly notices: NoticeHub;
  private readonly keyPrefix: string;
  private readonly channel: string;
  private readonly nearCache: FlightNearCache | undefined;
  private closed = false;
  /** Of the given business keys, those whose lease is gone (see `NoticeHub`). */
  private readonly leasesGone: LeaseCheck = async (keys) => {
    // The tag only ('L' while leased): a cached payload is not worth reading.
    const tags = await Promise.all(
      keys.map((key) => this.run(() => this.client.getrange(flightKey(this.keyPrefix, key), 0, 0))),
    );
    return keys.filter((_, index) => tags[index] !== 'L');
  };

  constructor(connection: RedisConnection, options: RedisFlightCoordinatorOptions = {}) {
    this.keyPrefix = keyPrefix(options.keyPrefix);
    this.channel = `${this.keyPrefix}flights`;
    const commandTimeout = positive('commandTimeout', options.commandTimeout ?? 1000);
    const nearCacheBounds = nearCacheBoundsOf(options.nearCache);

    const { client, owned, identity, backend } = coordinatorClient(connection);
    this.client = client;
    this.ownsClient = owned;
    this.notices = retainNoticeHub(identity, () => duplicateForNotices(client));
    this.scripts = defineFlightScripts(client);
    // A Cluster client swaps its subscriber connection without telling (no 'close' or 'ready'),
    // so notices lost meanwhile could not flush a near cache: it stays off there.
    if (nearCacheBounds !== undefined && !client.isCluster) {
      this.nearCache = new FlightNearCache(nearCacheBounds);
    }
    this.availability = new RedisAvailability(client, backend, commandTimeout);
  }

  /** Keys with a pending `waitForNotice` in this process, for this key prefix. */
  get waitingKeys(): number {
    return this.notices.waitingKeys(this.channel);
  }

  async acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    // Subscribing here rather than in the first wait gives the subscription a head start on
    // the first follower.
    if (!this.closed) void this.listen();
    const near = this.nearCache?.get(key);
    if (near) return near;
    const ticket = this.nearCache?.ticket(key);
    let reply: unknown;
    try {
      reply = await this.run(() =>
        this.scripts.acquire(flightKey(this.keyPrefix, key), owner, ms(leaseTtlMs)),
      );
    } catch (error) {
      if (ticket) this.nearCache!.settle(ticket);
      throw error;
    }
    const outcome = toAcquireOutcome(reply);
    if (ticket) {
      const stored = outcome.kind === 'cached' || outcome.kind === 'failed';
      this.nearCache!.settle(ticket, stored ? outcome : undefined, remainingMs(reply));
    }
    return outcome;
  }

  /** Answers from the near cache only: without it (`nearCache: false`, Cluster) never. */
  peek(key: string): HeldOutcome | undefined {
    return this.nearCache?.get(key);
  }

  async renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean> {
    const reply = await this.run(() =>
      this.scripts.renew(flightKey(this.keyPrefix, key), owner, ms(leaseTtlMs)),
    );
    return reply === 1;
  }

  async complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean> {
    const ticket = this.nearCache?.ticket(key);
    let reply: unknown;
    try {
      reply = await this.run(() =>
        this.scripts.complete(
          flightKey(this.keyPrefix, key),
          owner,
          `${outcome.kind === 'result' ? 'R' : 'E'}${outcome.payload}`,
          ms(outcome.ttlMs),
          this.channel,
          noticeMessage('released', key),
        ),
      );
    } catch (error) {
      if (ticket) this.nearCache!.settle(ticket);
      throw error;
    }
    if (ticket) {
      const stored: HeldOutcome = {
        kind: outcome.kind === 'result' ? 'cached' : 'failed',
        payload: outcome.payload,
      };
      // Redis applies (at least) ttlMs from when the script runs, after the ticket's sentAt.
      this.nearCache!.settle(ticket, reply === 1 ? stored : undefined, outcome.ttlMs);
    }
    return reply === 1;
  }

  async release(key: string, owner: string): Promise<boolean> {
    const reply = await this.run(() =>
      this.scripts.release(
        flightKey(this.keyPrefix, key),
        owner,
        this.channel,
        noticeMessage('released', key),
      ),
    );
    return reply === 1;
  }

  async forceReleaseLease(key: string): Promise<boolean> {
    const reply = await this.run(() =>
      this.scripts.forceRelease(
        flightKey(this.keyPrefix, key),
        this.channel,
        noticeMessage('released', key),
      ),
    );
    return reply === 1;
  }

  /** The state of business key `key` (never the cached value itself). */
  async inspectFlight(key: string): Promise<FlightInspection> {
    const reply = await this.run(() => this.scripts.inspect(flightKey(this.keyPrefix, key)));
    return toFlightInspection(reply);
  }

  /**
   * Business keys whose flight state starts with `operation` (`ns:op:ver`, or `ns:op` for all
   * versions), each with its state: a SCAN `MATCH` of every master of a cluster (never KEYS), in
   * no particular order. A key may be reported twice (SCAN's guarantee) and one created or
   * expiring during the scan may be missing; one gone by the time it is inspected is skipped.
   */
  async *listFlights(
    operation: string,
    options: { readonly batchSize?: number } = {},
  ): AsyncIterable<FlightEntry> {
    const batchSize = positive('batchSize', options.batchSize ?? 100);
    const pattern = flightKeyPattern(this.keyPrefix, operation);
    const nodes = this.client.isCluster
      ? (this.client as Cluster).nodes('master')
      : [this.client as Redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, found] = await this.run(() =>
          node.scan(cursor, 'MATCH', pattern, 'COUNT', batchSize),
        );
        cursor = next;
        const keys = found.flatMap((found) => businessKeyOf(this.keyPrefix, found) ?? []);
        const inspections = await Promise.all(keys.map((key) => this.inspectFlight(key)));
        for (const [index, inspection] of inspections.entries()) {
          if (inspection.kind !== 'absent') yield { key: keys[index]!, inspection };
        }
      } while (cursor !== '0');
    }
  }

  /**
   * Deletes the cached result or error of `key` (never a running lease) and tells every process
   * to drop its near-cached copy: the next call runs the work again. Resolves `false` when no
   * outcome was cached (a notice is then not sent).
   */
  async evictResult(key: string): Promise<boolean> {
    this.nearCache?.drop(key);
    const reply = await this.run(() =>
      this.scripts.evict(
        flightKey(this.keyPrefix, key),
        this.channel,
        noticeMessage('evicted', key),
      ),
    );
    return reply === 1;
  }

  /** Outcomes held by the near cache (expired ones until they are read or pushed out); 0 without one. */
  get nearCacheSize(): number {
    return this.nearCache?.size ?? 0;
  }

  /** Bytes of the outcomes held by the near cache, as its `maxBytes` counts them; 0 without one. */
  get nearCacheBytes(): number {
    return this.nearCache?.bytes ?? 0;
  }

  /**
   * Connects now rather than on first use: resolves when the client is ready and the notice
   * subscription confirmed, or fails with `CoordinatorUnavailableError` after `commandTimeout`.
   * Optional; useful at start-up so the first flights neither wait for a connection nor miss a
   * notice.
   */
  async connect(): Promise<void> {
    if (this.closed) throw this.availability.unavailable(new Error('this coordinator is closed'));
    await this.availability.ready();
    await this.availability.within(this.listen());
  }

  /**
   * The registry the SingleFlight claims of the engine go to: this Redis, under this key prefix
   * (`RedisClaimRegistry`), on this coordinator's client.
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

  waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.resolve();
    void this.listen();
    return this.notices.wait(this.channel, key, timeoutMs, signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.notices.forget(this.channel, this.leasesGone, this.nearCache);
    this.notices.release();
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }

  private listen(): Promise<void> {
    return this.notices.listen(this.channel, this.leasesGone, this.nearCache);
  }

  private run<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) {
      return Promise.reject(this.availability.unavailable(new Error('this coordinator is closed')));
    }
    return this.availability.run(command);
  }
}

/** The remaining time a cached/failed acquire reply reports (PTTL; -1 means no expiry: not kept). */
function remainingMs(reply: unknown): number | undefined {
  const pttl = Array.isArray(reply) ? Number(reply[2]) : NaN;
  return pttl > 0 ? pttl : undefined;
}

function toAcquireOutcome(reply: unknown): AcquireOutcome {
  const [kind, value, holder] = Array.isArray(reply) ? (reply as unknown[]) : [];
  switch (kind) {
    case 'cached':
      return { kind: 'cached', payload: String(value) };
    case 'failed':
      return { kind: 'failed', payload: String(value) };
    case 'leader':
      return { kind: 'leader', fence: Number(value) };
    case 'busy':
      // -1 (a lease without expiry, set by someone else) is reported as "no time left".
      return {
        kind: 'busy',
        leaseRemainingMs: Math.max(0, Number(value)),
        // A lease that expired between PTTL and GET has no holder left.
        ...(typeof holder === 'string' && { holder }),
      };
    default:
      throw new Error(`Unexpected reply from the oncely acquire script: ${JSON.stringify(reply)}`);
  }
}

/** Redis wants whole milliseconds; a fraction is rounded up so a TTL never shrinks to 0. */
function ms(value: number): number {
  return Math.ceil(value);
}

function positive(option: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidRedisOptionError(option, `expected a positive number, got ${value}.`);
  }
  return value;
}
