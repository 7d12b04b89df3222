import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';

/** Nodes and options of a Redis Cluster the coordinator connects to (and later closes). */
export interface RedisClusterConnection {
  readonly clusterNodes: ClusterNode[];
  readonly clusterOptions?: ClusterOptions;
}

/**
 * What the coordinator talks to: a client the caller owns (never closed by the coordinator), or
 * options for a client the coordinator creates and closes in `close()`.
 */
export type RedisConnection = Redis | Cluster | RedisOptions | RedisClusterConnection;

export interface RedisFlightCoordinatorOptions {
  /**
   * Prefix of every key and of the notice channel; default `oncely:`. Must not contain braces
   * (they would become the cluster hash tag). Coordinators share flights only if their prefixes
   * are equal.
   */
  readonly keyPrefix?: string;
  /**
   * Longest wait, in ms, for one Redis round trip (including a connection attempt in progress)
   * before the call fails with `CoordinatorUnavailableError`; default 1000.
   */
  readonly commandTimeout?: number;
}
