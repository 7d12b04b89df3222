/**
 * The ioredis clients behind a coordinator: the user's own, or one created (and later closed)
 * from options with settings that make an outage surface at once; and the subscriber connection
 * duplicated from either. The record store creates its clients here too, with ioredis' defaults.
 */
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import { InvalidRedisOptionError } from './invalid-redis-option.error.js';
import type {
  CreatedRedisConnection,
  RedisClusterConnection,
  RedisConnection,
} from './redis-connection.js';

/**
 * Settings of clients the coordinator creates. No offline queue and no retry of a command
 * caught by a disconnect: while Redis is down a call must fail at once (the engine then applies
 * `onCoordinatorDown`) rather than wait for a Redis that may not come back. The default retry
 * strategy keeps reconnecting in the background, so coordination resumes on its own. No ready
 * check either: a server still loading answers LOADING, which counts as unavailable anyway, and
 * an INFO in flight when the coordinator closes would leave ioredis holding the process open.
 */
const failFast = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  enableReadyCheck: false,
} as const;

/**
 * The subscriber, in contrast, waits: a SUBSCRIBE sent while disconnected applies later. The
 * notice hub subscribes again itself on every 'ready', to know when to look for missed notices.
 */
const patientSubscriber = {
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
  enableReadyCheck: false,
  autoResubscribe: false,
} as const;

export interface CoordinatorClient {
  readonly client: Redis | Cluster;
  /** Created here, so closed by the coordinator. */
  readonly owned: boolean;
  /**
   * What coordinators sharing one subscriber have in common: the client instance, or for
   * created clients their options as sorted JSON (functions such as a retry strategy aside).
   */
  readonly identity: unknown;
  /** Where the client points, for error messages. */
  readonly backend: string;
}

export function coordinatorClient(connection: RedisConnection): CoordinatorClient {
  if (isClient(connection)) {
    return {
      client: connection,
      owned: false,
      identity: connection,
      backend: describe(connection),
    };
  }
  const client =
    typeof connection === 'string'
      ? createClient(connection, failFast)
      : createClient(
          isClusterConnection(connection)
            ? { ...connection, clusterOptions: failFastCluster(connection.clusterOptions) }
            : { ...failFast, ...connection },
        );
  return { client, owned: true, identity: identityOf(connection), backend: describe(client) };
}

/**
 * A client created from a URL or options, for the coordinator or a record store to close later
 * (`settings` apply on top of a URL's). Connection errors reach callers as rejected calls;
 * without a listener ioredis would also print every failed reconnection attempt.
 */
export function createClient(
  connection: CreatedRedisConnection,
  settings: RedisOptions = {},
): Redis | Cluster {
  const client =
    typeof connection === 'string'
      ? new Redis(redisUrl(connection), settings)
      : isClusterConnection(connection)
        ? new Cluster(connection.clusterNodes, connection.clusterOptions)
        : new Redis(connection);
  client.on('error', () => undefined);
  return client;
}

/** Only URLs: ioredis would read any other string as a socket path, and fail much later. */
function redisUrl(url: string): string {
  if (/^rediss?:\/\//i.test(url)) return url;
  throw new InvalidRedisOptionError(
    'connection',
    `expected a redis:// or rediss:// URL, an ioredis client or RedisOptions, got a string starting ${JSON.stringify(url.slice(0, 10))}.`,
  );
}

/** A new connection with the same target and options, set up for SUBSCRIBE. */
export function duplicateForNotices(client: Redis | Cluster): Redis | Cluster {
  if (client.isCluster) {
    const cluster = client as Cluster;
    return cluster.duplicate([], {
      enableOfflineQueue: true,
      lazyConnect: false,
      redisOptions: { ...cluster.options.redisOptions, ...patientSubscriber },
    });
  }
  return (client as Redis).duplicate({ ...patientSubscriber, lazyConnect: false });
}

/** Whether `connection` is a ready-made client (the caller's, never closed here). */
export function isClient(connection: RedisConnection): connection is Redis | Cluster {
  return (
    typeof (connection as Partial<Redis>).defineCommand === 'function' &&
    typeof (connection as Partial<Redis>).status === 'string'
  );
}

function isClusterConnection(connection: RedisConnection): connection is RedisClusterConnection {
  return Array.isArray((connection as Partial<RedisClusterConnection>).clusterNodes);
}

function failFastCluster(options: ClusterOptions = {}): ClusterOptions {
  return {
    enableOfflineQueue: false,
    ...options,
    redisOptions: { ...failFast, ...options.redisOptions },
  };
}

function identityOf(options: CreatedRedisConnection): string {
  if (typeof options === 'string') return `url ${options}`;
  return JSON.stringify(options, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
}

function describe(client: Redis | Cluster): string {
  if (client.isCluster) return 'redis cluster';
  const { host, port, path } = (client as Redis).options;
  return path ? `redis ${path}` : `redis ${host ?? '127.0.0.1'}:${port ?? 6379}`;
}
