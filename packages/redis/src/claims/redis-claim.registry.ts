import type { Cluster, Redis } from 'ioredis';
import type {
  ClaimAnnouncement,
  ClaimCheck,
  ClaimConflict,
  ClaimedOperation,
  ClaimRegistry,
  RegistryClaim,
} from '@oncely/core';
import { claimCheckOf, claimSlot, isForeignClaim } from '@oncely/core/adapter';
import { keyPrefix } from '../connection/key-prefix.js';
import { createClient, isClient } from '../connection/redis-clients.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import { defineClaimScripts, type ClaimScripts } from './claim-scripts.js';

/** Options of `RedisClaimRegistry`. */
export interface RedisClaimRegistryOptions {
  /** What the registry's keys start with; default `oncely:`, as the other adapters' keys. */
  readonly keyPrefix?: string;
  /** How long a call waits for a client still connecting, in milliseconds (default 10 000). */
  readonly connectTimeout?: number;
}

/** One instance's entry on an operation, as `RedisClaimRegistry.entries` lists it. */
export interface RedisClaimEntry {
  /** The app instance (one per process). */
  readonly instance: string;
  /** Its claim; `undefined` when the entry cannot be read. */
  readonly claim: RegistryClaim | undefined;
  /** When the entry lapses unless renewed, in epoch milliseconds of Redis' clock. */
  readonly expiresAt: number | undefined;
}

/**
 * Claims of the services sharing one Redis (standalone or Cluster): per mechanism and operation,
 * a hash of entries (one per app instance, the claim as JSON) and a sorted set of their expiries
 * (Redis' clock), both at `<keyPrefix>claims:{<mechanism>:<operation>}:…`, so one slot holds
 * them and each script (`lua/claim-*.lua`) is one atomic step. Replicas of one service each keep
 * an entry; one withdrawing or dying takes only its own away. What `RedisFlightCoordinator` and
 * `RedisIdempotencyRecordStore` offer as their `claimRegistry()`, under their key prefix.
 */
export class RedisClaimRegistry implements ClaimRegistry {
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly scripts: ClaimScripts;
  private readonly prefix: string;
  private readonly connectTimeoutMs: number;

  /**
   * @param connection an ioredis `Redis` or `Cluster` (stays yours), or a URL or options for a
   *   client the registry creates and `close` quits.
   */
  constructor(connection: RedisConnection, options: RedisClaimRegistryOptions = {}) {
    this.prefix = keyPrefix(options.keyPrefix);
    this.connectTimeoutMs = options.connectTimeout ?? 10_000;
    this.ownsClient = !isClient(connection);
    this.client = isClient(connection) ? connection : createClient(connection);
    this.scripts = defineClaimScripts(this.client);
  }

  async announce({ instance, claims, ttlMs }: ClaimAnnouncement): Promise<ClaimCheck> {
    await this.connected();
    // One script per claim: each operation lives in its own slot. Sent together, so the client
    // pipelines them.
    const found = await Promise.all(
      claims.map(async (claim) => {
        const keys = this.keys(claim);
        const others = await this.scripts.announce(
          keys.entries,
          keys.expiry,
          instance,
          JSON.stringify(claim),
          Math.ceil(ttlMs),
        );
        return others
          .map(parseClaim)
          .filter((other): other is RegistryClaim => other !== undefined)
          .filter((other) => isForeignClaim(claim, other))
          .map((foreign): ClaimConflict => ({ claim, foreign }));
      }),
    );
    return claimCheckOf(found.flat());
  }

  async withdraw(instance: string, claims: readonly RegistryClaim[]): Promise<void> {
    await this.connected();
    await Promise.all(
      claims.map((claim) => {
        const keys = this.keys(claim);
        return this.scripts.withdraw(keys.entries, keys.expiry, instance);
      }),
    );
  }

  /**
   * Every entry held on an operation, with its instance and expiry (epoch ms of Redis' clock):
   * what operators and tests read. Entries past their expiry may still be listed until the next
   * announcement deletes them.
   */
  async entries(operation: ClaimedOperation): Promise<RedisClaimEntry[]> {
    await this.connected();
    const keys = this.keys(operation);
    const [entries, expiries] = await Promise.all([
      this.client.hgetall(keys.entries),
      this.client.zrange(keys.expiry, 0, -1, 'WITHSCORES'),
    ]);
    const expiresAt = new Map<string, number>();
    for (let i = 0; i < expiries.length; i += 2)
      expiresAt.set(expiries[i]!, Number(expiries[i + 1]));
    return Object.entries(entries).map(([instance, json]) => ({
      instance,
      claim: parseClaim(json),
      expiresAt: expiresAt.get(instance),
    }));
  }

  /** Quits the client if the registry created it; a client passed in is left open. */
  async close(): Promise<void> {
    if (!this.ownsClient) return;
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    this.client.disconnect();
  }

  /** The keys of a claim's slot; the brace part is its Cluster hash tag. */
  private keys(claim: ClaimedOperation): { entries: string; expiry: string } {
    const tag = encodeURIComponent(claimSlot(claim));
    return {
      entries: `${this.prefix}claims:{${tag}}:entries`,
      expiry: `${this.prefix}claims:{${tag}}:expiry`,
    };
  }

  /**
   * Waits for a client still connecting: the coordinator's client queues nothing while offline,
   * and claims are registered right at start-up.
   */
  private async connected(): Promise<void> {
    const { client } = this;
    if (client.status === 'ready' || client.status === 'end' || client.status === 'close') return;
    if (client.status === 'wait') await client.connect().catch(() => undefined);
    if ((client.status as string) === 'ready') return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, this.connectTimeoutMs);
      client.on('ready', done);
    });
  }
}

function parseClaim(json: string): RegistryClaim | undefined {
  try {
    const claim = JSON.parse(json) as Partial<RegistryClaim> | null;
    return typeof claim?.owner === 'string' ? (claim as RegistryClaim) : undefined;
  } catch {
    return undefined;
  }
}
