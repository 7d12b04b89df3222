import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  OncelyAdmin,
  type FlightCoordinator,
  type IdempotencyRecordAdmin,
  type IdempotencyRecordStore,
} from '@oncely/core';
import { UsageError } from '../cli/cli-command.js';
import { importPeer } from './import-peer.js';

/** Where the operator commands connect, from their flags or the environment. */
export interface ConnectionFlags {
  /** Redis URLs: one server, or seed nodes of a cluster. */
  readonly redis: readonly string[];
  /** Whether `redis` names seed nodes of a Redis Cluster. */
  readonly cluster: boolean;
  /** The adapters' key prefix (default theirs, `oncely:`). */
  readonly keyPrefix?: string;
  /** The records' database: `postgres://`, `mysql://`, `mariadb://`, or a SQLite file. */
  readonly database?: string;
}

/** The admin over what the flags name, and how to close exactly what was opened for it. */
export interface OperatorConnection {
  readonly admin: OncelyAdmin;
  /** Where the durable records are. */
  readonly records: 'redis' | 'database';
  /** Closes the clients and data source the CLI created, nothing else. */
  close(): Promise<void>;
}

/** The environment variables read when a flag is not given. */
export const CONNECTION_ENV = {
  redis: 'ONCELY_REDIS_URL',
  cluster: 'ONCELY_REDIS_CLUSTER',
  keyPrefix: 'ONCELY_KEY_PREFIX',
  database: 'ONCELY_DATABASE_URL',
} as const;

/** The flags every operator command takes, as `parseArgs` options. */
export const CONNECTION_OPTIONS = {
  redis: { type: 'string', multiple: true },
  cluster: { type: 'boolean' },
  'key-prefix': { type: 'string' },
  database: { type: 'string' },
} as const;

/** The flags in a command's usage. */
export const CONNECTION_USAGE = `  --redis <url>       Redis with the records and/or SingleFlight state (env ${CONNECTION_ENV.redis});
                      with --cluster, seed nodes, repeated or comma-separated
  --cluster           the Redis URLs are seed nodes of a Redis Cluster (env ${CONNECTION_ENV.cluster}=1)
  --key-prefix <p>    the adapters' keyPrefix, when the app sets one (env ${CONNECTION_ENV.keyPrefix})
  --database <url>    the records' database: postgres://…[?schema=name], mysql://…, mariadb://…,
                      or a SQLite file path (env ${CONNECTION_ENV.database}); records are read
                      there, and Redis, if also given, is the SingleFlight coordinator
  --json              machine-readable output`;

/** Reads the connection flags, falling back on the environment; throws `UsageError` on none. */
export function connectionFlagsOf(
  values: {
    readonly redis?: readonly string[] | undefined;
    readonly cluster?: boolean | undefined;
    readonly 'key-prefix'?: string | undefined;
    readonly database?: string | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
  usage: string,
): ConnectionFlags {
  const listed = values.redis?.length ? values.redis : [env[CONNECTION_ENV.redis] ?? ''];
  const redis = listed.flatMap((urls) => urls.split(',')).map((url) => url.trim());
  const urls = redis.filter((url) => url !== '');
  const cluster =
    values.cluster ?? ['1', 'true', 'yes'].includes(env[CONNECTION_ENV.cluster] ?? '');
  const keyPrefix = values['key-prefix'] ?? env[CONNECTION_ENV.keyPrefix];
  const database = values.database ?? env[CONNECTION_ENV.database];
  if (urls.length === 0 && !database) {
    throw new UsageError(
      `Name where the records are: --redis <url> or --database <url> (or ${CONNECTION_ENV.redis} / ${CONNECTION_ENV.database}).`,
      usage,
    );
  }
  if (urls.length > 1 && !cluster) {
    throw new UsageError(
      `${urls.length} Redis URLs were given: add --cluster if they are seed nodes of a Redis Cluster, or give one.`,
      usage,
    );
  }
  return {
    redis: urls,
    cluster,
    ...(keyPrefix !== undefined && keyPrefix !== '' && { keyPrefix }),
    ...(database !== undefined && database !== '' && { database }),
  };
}

/**
 * Opens what the flags name and builds the admin over it: records in the database when one is
 * given, else in Redis; Redis, when given, is also the SingleFlight coordinator. The adapters
 * are loaded with `import()` only now, so the CLI needs only those it uses.
 */
export async function connectOperator(
  flags: ConnectionFlags,
  cwd: string,
): Promise<OperatorConnection> {
  const closers: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined);
  };
  try {
    let store: IdempotencyRecordStore | undefined;
    let admin: IdempotencyRecordAdmin | undefined;
    let coordinator: FlightCoordinator | undefined;
    if (flags.redis.length > 0) {
      const { Redis, Cluster } = await importPeer('ioredis', '--redis', () => import('ioredis'));
      const adapters = await importPeer('@oncely/redis', '--redis', () => import('@oncely/redis'));
      // Give up on an unreachable server after a few tries instead of retrying forever.
      const retry = (times: number) => (times > 3 ? null : 200);
      const client = flags.cluster
        ? new Cluster(flags.redis.map(seedNodeOf), {
            redisOptions: { ...credentialsOf(flags.redis[0]!), maxRetriesPerRequest: 1 },
            clusterRetryStrategy: retry,
          })
        : new Redis(flags.redis[0]!, { maxRetriesPerRequest: 1, retryStrategy: retry });
      closers.push(async () => {
        await client.quit().catch(() => undefined);
        client.disconnect();
      });
      await readyOrUnreachable(client, flags.redis);
      const options = flags.keyPrefix === undefined ? {} : { keyPrefix: flags.keyPrefix };
      // A one-shot command has nothing to keep near: no cache, no subscription for it.
      const redisCoordinator = new adapters.RedisFlightCoordinator(client, {
        ...options,
        nearCache: false,
      });
      closers.push(() => redisCoordinator.close());
      coordinator = redisCoordinator;
      if (flags.database === undefined) {
        store = new adapters.RedisIdempotencyRecordStore(client, options);
        admin = new adapters.RedisIdempotencyRecordAdmin(client, options);
      }
    }
    if (flags.database !== undefined) {
      const typeorm = await importPeer('typeorm', '--database', () => import('typeorm'));
      const adapters = await importPeer(
        '@oncely/typeorm',
        '--database',
        () => import('@oncely/typeorm'),
      );
      const options = dataSourceOptionsOf(flags.database, cwd);
      if (options.type === 'better-sqlite3' && !existsSync(options.database)) {
        throw new Error(
          `--database ${flags.database}: no SQLite file at ${options.database}. Give the path of the app's database file.`,
        );
      }
      const dataSource = new typeorm.DataSource(options);
      await initializedOrUnreachable(dataSource, flags.database);
      closers.push(() => dataSource.destroy());
      store = new adapters.TypeOrmIdempotencyRecordStore(dataSource);
      admin = new adapters.TypeOrmIdempotencyRecordAdmin(dataSource);
    }
    return {
      admin: new OncelyAdmin(store!, {
        admin: admin!,
        // Without --redis the operator reaches no coordinator: records only, as the flags say.
        coordinator: coordinator ?? 'none',
      }),
      records: flags.database === undefined ? 'redis' : 'database',
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** TypeORM options of a `--database` URL; a plain path (or `sqlite:path`) is a SQLite file. */
export function dataSourceOptionsOf(database: string, cwd: string) {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(database)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const url = databaseUrlOf(database);
    // TypeORM takes the schema as an option; the record table lives there.
    const schema = url.searchParams.get('schema');
    url.searchParams.delete('schema');
    return {
      type: 'postgres' as const,
      url: url.toString(),
      poolSize: 2,
      ...(schema !== null && { schema }),
    };
  }
  if (scheme === 'mysql' || scheme === 'mariadb') {
    databaseUrlOf(database);
    return {
      type: scheme === 'mysql' ? ('mysql' as const) : ('mariadb' as const),
      url: database.replace(/^mariadb:/i, 'mysql:'),
      poolSize: 2,
    };
  }
  if (scheme !== undefined && scheme !== 'sqlite' && scheme !== 'file') {
    throw new UsageError(
      `--database ${scheme}:// is not supported: give postgres://, mysql://, mariadb:// or a SQLite file path.`,
      CONNECTION_USAGE,
    );
  }
  const path = database.replace(/^(sqlite|file):(\/\/)?/i, '');
  return { type: 'better-sqlite3' as const, database: resolve(cwd, path) };
}

/** `database` as a URL, or a `UsageError` naming the flag (never the password). */
function databaseUrlOf(database: string): URL {
  try {
    return new URL(database);
  } catch {
    throw new UsageError(
      `--database ${withoutPassword(database)} is not a valid URL: give postgres://user@host:port/database, mysql://… or mariadb://… (percent-encode special characters of the user and password).`,
      CONNECTION_USAGE,
    );
  }
}

/**
 * Initializes the data source, or fails naming the flag, the server (without its password) and
 * the driver's reason, as `readyOrUnreachable` does for Redis, instead of a bare driver error.
 */
async function initializedOrUnreachable(
  dataSource: { initialize(): Promise<unknown> },
  database: string,
): Promise<void> {
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new Error(
      `Could not connect to the database at ${withoutPassword(database)}: ${reasonOf(error)}. Check --database and that the server is reachable.`,
      { cause: error },
    );
  }
}

/**
 * The driver's reason. Read by shape, not `instanceof`: drivers may build errors in another
 * realm. Node reports a connection refused on every address as an `AggregateError` with no
 * message of its own, so its first error speaks for it.
 */
function reasonOf(error: unknown): string {
  const { message, errors } = (error ?? {}) as { message?: unknown; errors?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (Array.isArray(errors) && errors.length > 0) return reasonOf(errors[0]);
  return String(error);
}

/** A connection URL as it may be shown: its password left out. */
function withoutPassword(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, '$1@');
}

/** What `readyOrUnreachable` listens to on an ioredis client or cluster. */
interface RedisEvents {
  once(event: 'ready' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event: 'ready' | 'end'): unknown;
}

/**
 * Waits until the client is ready, or fails naming the server and its last error once the
 * client gives up (after the few retries of its retry strategy), instead of a bare command
 * failure later. Errors after that are the commands' own.
 */
function readyOrUnreachable(client: RedisEvents, urls: readonly string[]): Promise<void> {
  let last: Error | undefined;
  client.on('error', (error) => (last = error));
  return new Promise<void>((ready, fail) => {
    client.once('ready', () => {
      client.removeAllListeners('end');
      ready();
    });
    client.once('end', () => {
      client.removeAllListeners('ready');
      const where = urls.map((url) => url.replace(/\/\/[^@/]*@/, '//')).join(', ');
      fail(
        new Error(
          `Could not connect to Redis at ${where}: ${last?.message ?? 'connection closed'}. Check --redis and that the server is reachable.`,
        ),
      );
    });
  });
}

function seedNodeOf(url: string): { host: string; port: number } {
  const parsed = new URL(url.includes('://') ? url : `redis://${url}`);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

function credentialsOf(url: string): { username?: string; password?: string; tls?: object } {
  const parsed = new URL(url.includes('://') ? url : `redis://${url}`);
  return {
    ...(parsed.username !== '' && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password !== '' && { password: decodeURIComponent(parsed.password) }),
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
  };
}
