import type {
  AcquireOutcome,
  ClaimRegistrySource,
  FlightCoordinator,
  FlightLeaseAdmin,
  FlightOutcome,
} from '@oncely/core';
import type { Cluster, Redis } from 'ioredis';
import { RedisClaimRegistry } from '../claims/redis-claim.registry.js';
import { InvalidRedisOptionError } from '../connection/invalid-redis-option.error.js';
import { keyPrefix } from '../connection/key-prefix.js';
import { RedisAvailability } from '../connection/redis-availability.js';
import { coordinatorClient, duplicateForNotices } from '../connection/redis-clients.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import { flightKeys } from './flight-keys.js';
import { defineFlightScripts, type FlightScripts } from './flight-scripts.js';
import { retainNoticeHub, type LeaseCheck, type NoticeHub } from './notice-hub.js';
import type { RedisFlightCoordinatorOptions } from './redis-flight-coordinator.options.js';

/**
 * `FlightCoordinator` on Redis (standalone or Cluster) through ioredis: each port method is one
 * Lua script run (one round trip), keys carry the business key as cluster hash tag, and
 * completion notices travel on one pub/sub channel per key prefix, published only when a follower
 * is waiting (a `waiters` flag its busy `acquire` sets), so a flight nobody waits for sends no
 * message to the subscribed processes.
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
  implements FlightCoordinator, FlightLeaseAdmin, ClaimRegistrySource
{
  #claims: RedisClaimRegistry | undefined;
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly scripts: FlightScripts;
  private readonly availability: RedisAvailability;
  private readonly notices: NoticeHub;
  private readonly keyPrefix: string;
  private readonly channel: string;
  private closed = false;
  /** Of the given business keys, those whose lease is gone (see `NoticeHub`). */
  private readonly leasesGone: LeaseCheck = async (keys) => {
    const exists = await Promise.all(
      keys.map((key) => this.run(() => this.client.exists(flightKeys(this.keyPrefix, key).lease))),
    );
    return keys.filter((_, index) => exists[index] === 0);
  };

  constructor(connection: RedisConnection, options: RedisFlightCoordinatorOptions = {}) {
    this.keyPrefix = keyPrefix(options.keyPrefix);
    this.channel = `${this.keyPrefix}flight-notices`;
    const commandTimeout = positive('commandTimeout', options.commandTimeout ?? 1000);

    const { client, owned, identity, backend } = coordinatorClient(connection);
    this.client = client;
    this.ownsClient = owned;
    this.notices = retainNoticeHub(identity, () => duplicateForNotices(client));
    this.scripts = defineFlightScripts(client);
    this.availability = new RedisAvailability(client, backend, commandTimeout);
  }

  /** Keys with a pending `waitForNotice` in this process, for this key prefix. */
  get waitingKeys(): number {
    return this.notices.waitingKeys(this.channel);
  }

  async acquire(key: string, owner: string, leaseTtlMs: number): Promise<AcquireOutcome> {
    // Subscribing here rather than in the first wait gives the subscription a head start on
    // the first follower.
    if (!this.closed) void this.notices.listen(this.channel, this.leasesGone);
    const keys = flightKeys(this.keyPrefix, key);
    const reply = await this.run(() =>
      this.scripts.acquire(
        keys.lease,
        keys.result,
        keys.error,
        keys.fence,
        keys.waiters,
        owner,
        ms(leaseTtlMs),
      ),
    );
    return toAcquireOutcome(reply);
  }

  async renew(key: string, owner: string, leaseTtlMs: number): Promise<boolean> {
    const keys = flightKeys(this.keyPrefix, key);
    const reply = await this.run(() =>
      this.scripts.renew(keys.lease, keys.fence, keys.waiters, owner, ms(leaseTtlMs)),
    );
    return reply === 1;
  }

  async complete(key: string, owner: string, outcome: FlightOutcome): Promise<boolean> {
    const keys = flightKeys(this.keyPrefix, key);
    const target = outcome.kind === 'result' ? keys.result : keys.error;
    const reply = await this.run(() =>
      this.scripts.complete(
        keys.lease,
        target,
        keys.waiters,
        owner,
        outcome.payload,
        ms(outcome.ttlMs),
        this.channel,
        key,
      ),
    );
    return reply === 1;
  }

  async release(key: string, owner: string): Promise<boolean> {
    const keys = flightKeys(this.keyPrefix, key);
    const reply = await this.run(() =>
      this.scripts.release(keys.lease, keys.waiters, owner, this.channel, key),
    );
    return reply === 1;
  }

  async forceReleaseLease(key: string): Promise<boolean> {
    const keys = flightKeys(this.keyPrefix, key);
    const reply = await this.run(() =>
      this.scripts.forceRelease(keys.lease, keys.waiters, this.channel, key),
    );
    return reply === 1;
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
    await this.availability.within(this.notices.listen(this.channel, this.leasesGone));
  }

  /**
   * The registry the SingleFlight claims of the engine go to: this Redis, under this key prefix
   * (`RedisClaimRegistry`), on this coordinator's client.
   */
  claimRegistry(): RedisClaimRegistry {
    this.#claims ??= new RedisClaimRegistry(this.client, { keyPrefix: this.keyPrefix });
    return this.#claims;
  }

  waitForNotice(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.resolve();
    void this.notices.listen(this.channel, this.leasesGone);
    return this.notices.wait(this.channel, key, timeoutMs, signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.notices.forget(this.channel, this.leasesGone);
    this.notices.release();
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }

  private run<T>(command: () => Promise<T>): Promise<T> {
    if (this.closed) {
      return Promise.reject(this.availability.unavailable(new Error('this coordinator is closed')));
    }
    return this.availability.run(command);
  }
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
