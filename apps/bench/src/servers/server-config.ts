/** What a contender server process is told by the bench, through its environment. */
export type Platform = 'express' | 'fastify';

export interface ServerConfig {
  readonly platform: Platform;
  readonly redisPort: number;
  readonly keyPrefix: string;
  /** Where `@IdempotentKey` keeps its records: the Redis record store or a PostgreSQL schema. */
  readonly store: 'redis' | 'postgres';
  readonly postgresSchema: string;
  /** How long the `coalesce` scenario's handler works (ms). */
  readonly slowHandlerMs: number;
}

export function serverConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const platform = env.BENCH_PLATFORM === 'fastify' ? 'fastify' : 'express';
  const store = env.BENCH_STORE === 'postgres' ? 'postgres' : 'redis';
  return {
    platform,
    redisPort: Number(env.BENCH_REDIS_PORT ?? 6379),
    keyPrefix: env.BENCH_KEY_PREFIX ?? 'oncely-bench:',
    store,
    postgresSchema: env.BENCH_PG_SCHEMA ?? 'oncely_bench',
    slowHandlerMs: Number(env.BENCH_SLOW_HANDLER_MS ?? 200),
  };
}
