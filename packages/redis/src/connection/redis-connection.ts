import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';

/** Nodes and options of a Redis Cluster the adapter connects to (and later closes). */
export interface RedisClusterConnection {
  /** The cluster's seed nodes, as ioredis' `Cluster` takes them. */
  readonly clusterNodes: ClusterNode[];
  /** ioredis cluster options; the coordinator adds its fail-fast settings to them. */
  readonly clusterOptions?: ClusterOptions;
}

/**
 * What a coordinator or record store talks to: a client the caller owns (never closed by the
 * adapter), or a `redis://` / `rediss://` URL or options for a client the adapter creates and
 * closes in `close()`.
 */
export type RedisConnection = Redis | Cluster | string | RedisOptions | RedisClusterConnection;

/** What the adapter creates a client from, and therefore closes. */
export type CreatedRedisConnection = Exclude<RedisConnection, Redis | Cluster>;
